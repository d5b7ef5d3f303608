/**
 * axe-core in a page, cheaply: the audit most browser tests end with.
 *
 * `@axe-core/playwright`'s `analyze()` injects axe's 500 KB source into every frame on every call
 * and then opens a fresh blank page to finish the run there (its way of joining frames' partial
 * results): measured on this app's pages, about 500 ms of mostly Chromium CPU per call, where the
 * audit itself is 35–180 ms. A page without frames (all of this app's) needs none of that: axe is
 * evaluated into the document once (again only after a navigation replaced it) and `axe.run` is
 * called there, with the same rules and options. A page with a frame goes through AxeBuilder,
 * which reaches into frames.
 */
import { AxeBuilder } from '@axe-core/playwright'
import axe from 'axe-core'
import type { Page } from 'playwright-core'

export interface AxeAuditOptions {
  /** Audit inside this selector only (the whole document by default). */
  include?: string
  /** Run only these rules (every rule by default). */
  rules?: readonly string[]
}

/**
 * What a run is asked: violations only (axe then keeps one node of each passing rule rather than
 * all; nothing here reads what passed), and every rule with WCAG 2.2's target size (24 px, or room
 * around a smaller target; off in axe by default) on, or only the rules named.
 */
function runOptions(rules: readonly string[] | undefined): axe.RunOptions {
  return rules
    ? { resultTypes: ['violations'], runOnly: { type: 'rule', values: [...rules] } }
    : { resultTypes: ['violations'], rules: { 'target-size': { enabled: true } } }
}

/** axe's violations on `page` as it is now (see the file's comment for how it runs). */
export async function axeAudit(page: Page, options: AxeAuditOptions = {}): Promise<axe.Result[]> {
  if (await page.locator('iframe').count() > 0) return auditWithFrames(page, options)
  if (!await page.evaluate(() => 'axe' in window)) await page.evaluate(`${axe.source};void 0`)
  const run: axe.RunOptions = { ...runOptions(options.rules), iframes: false }
  return page.evaluate(
    async ({ include, run }) => {
      const runner = (window as unknown as { axe: typeof axe }).axe
      return (await runner.run(include ? { include: [include] } : document, run)).violations
    },
    { include: options.include, run },
  )
}

/** The same audit through AxeBuilder, which injects axe into each frame and joins their results. */
async function auditWithFrames(page: Page, options: AxeAuditOptions): Promise<axe.Result[]> {
  let builder = new AxeBuilder({ page }).options(runOptions(options.rules))
  if (options.include) builder = builder.include(options.include)
  return (await builder.analyze()).violations
}

/** Only the violations a person is stopped or seriously hindered by (what every test here fails on). */
export function blocking(violations: readonly axe.Result[]): axe.Result[] {
  return violations.filter(violation => violation.impact === 'critical' || violation.impact === 'serious')
}
