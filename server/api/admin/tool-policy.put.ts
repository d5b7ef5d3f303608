import { z } from 'zod'

/**
 * Replaces the admin's tool rules (`{ "rules": [{ "effect": "deny", "tools": ["source:mcp"],
 * "roles": ["guest"] }] }`); 400 naming the rule and field that does not fit. Applies at once on
 * this instance (from a running job's next round), within seconds on others. Admins only.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, z.record(z.string(), z.unknown()))
  return useToolSources().policy.setAdminRules(body)
})
