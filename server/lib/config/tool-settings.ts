/**
 * The tool settings (`tools.*` of server-config.ts): which tool sources and built-in tools are on,
 * and the bounds each runs within.
 */
import { z } from 'zod'
import or3Config from '../../../config.or3'
import { group, networkList, setting } from './setting-types'

const { features } = or3Config

/** Every tool setting, with its default and what it means. */
export function toolSettings() {
  return group({
    discovery: setting(z.boolean(), features.toolDiscovery.enabled,
      'Register the tool files under `server/tools/**` at start-up.'),
    dynamic: group({
      enabled: setting(z.boolean(), true,
        "Load tool files from a watched directory while the server runs (see Tools → The dynamic tools directory). They run with the server's privileges."),
      dir: setting(z.string().trim(), '',
        'That directory; empty: `tools` under the data directory (`.data/tools`), created when missing.'),
    }),
    policyFile: setting(z.string().trim(), '',
      "The operator's tool policy: a JSON or YAML file of allow/deny rules per role or user (see Tools → Who may use which tools); empty: the defaults (admins and users every tool, guests the built-in ones)."),
    credentialsFile: setting(z.string().trim(), '',
      'The operator\'s server-wide tool credentials: a JSON or YAML file (`{"github": {"token": "…"}}`); empty: none (people add their own in Settings → Credentials).'),
    web: group({
      fetch: setting(z.boolean(), true,
        'Offer `web_fetch` (a page as readable text). It reaches public addresses only (see `allowedNetworks`); gated by the policy name `capability:internet_access` (guests: denied unless a rule allows it).'),
      allowedNetworks: setting(networkList, '',
        'Private addresses or networks `web_fetch` may reach although they are private (comma-separated, such as `10.1.2.3,192.168.0.0/16`); empty: none. Loopback, link-local (cloud metadata) and the other private ranges stay refused.'),
      maxBytes: setting(z.number().int().min(10_000).max(50_000_000), 2_000_000,
        'Most bytes of one page `web_fetch` reads (the rest is not downloaded).'),
      timeoutMs: setting(z.number().int().min(1_000).max(120_000), 15_000,
        'Longest one `web_fetch` (every redirect together) may take.'),
      maxChars: setting(z.number().int().min(1_000).max(500_000), 40_000,
        'Longest text `web_fetch` or `web_search` hands the model (characters; the rest is cut, saying so).'),
      requestsPerMinute: setting(z.number().int().min(1).max(10_000), 30,
        'Fetches and searches one person may make per minute (counted on every instance together on Convex); past it the call fails saying when to try again.'),
      searxngUrl: setting(z.string().trim(), '',
        'A SearXNG instance (`https://search.example.org`, its JSON format enabled) for `web_search`; the first configured provider of SearXNG, Brave, Tavily is used, and with none `web_search` is not offered.'),
      braveApiKey: setting(z.string().trim(), '',
        'A Brave Search API key for `web_search`.'),
      tavilyApiKey: setting(z.string().trim(), '',
        'A Tavily API key for `web_search`.'),
    }),
    workspace: group({
      enabled: setting(z.boolean(), true,
        'Give each conversation and workflow run a workspace of files (kept in the store) and the file tools `read`, `write`, `edit`, `ls`, `glob`, `grep` (policy name `capability:workspace`).'),
      bytesPerUser: setting(z.number().int().min(1_000).max(10_000_000_000), 50 * 1024 * 1024,
        'Bytes of workspace files one person may keep across all their workspaces; past it a write fails saying what to delete.'),
      filesPerUser: setting(z.number().int().min(1).max(100_000), 2_000,
        'Workspace files one person may keep across all their workspaces.'),
      fileBytes: setting(z.number().int().min(1_000).max(100_000_000), 5 * 1024 * 1024,
        'Largest workspace file.'),
    }),
    bash: group({
      enabled: setting(z.boolean(), false,
        'Offer `bash`: a shell command in a bubblewrap sandbox (no network, the system read-only, the workspace as its working directory). Needs `bwrap` (`apt install bubblewrap`); without it, or off, `bash` is listed as unavailable and never offered (policy names `capability:code_execution`, `capability:workspace`).'),
      timeoutMs: setting(z.number().int().min(1_000).max(600_000), 30_000,
        'Longest one `bash` command may run; the whole sandbox is killed then.'),
      memoryMb: setting(z.number().int().min(16).max(16_384), 512,
        'Virtual memory one `bash` command may use (MiB, `ulimit -v`).'),
    }),
    subagents: group({
      enabled: setting(z.boolean(), true,
        'Offer `task`: an agent starts a subagent (a child job with its own instructions, model and tools, sharing its workspace) and gets its final answer as the result (policy name `capability:subagents`). Counted in its person\'s running jobs and budget.'),
      maxDepth: setting(z.number().int().min(1).max(5), 2,
        'How deep subagents may nest: 1 lets an answer start subagents that start none.'),
      perJob: setting(z.number().int().min(1).max(50), 5,
        'Subagents one job may start.'),
    }),
    code: group({
      enabled: setting(z.boolean(), true,
        'Offer `run_code`: JavaScript in a QuickJS WebAssembly sandbox in a worker thread, with no host access; it reads and writes the workspace only (policy name `capability:code_execution`).'),
      timeoutMs: setting(z.number().int().min(100).max(300_000), 10_000,
        'Longest one `run_code` may run; past it the code is stopped and the model told so.'),
      memoryMb: setting(z.number().int().min(8).max(4_096), 64,
        'Memory one `run_code` may use (MiB); past it the code is stopped with an out-of-memory error.'),
      runsAtOnce: setting(z.number().int().min(1).max(64), 2,
        'Sandboxes running at once on this instance; more calls wait their turn.'),
      python: setting(z.boolean(), true,
        "Let `run_code` run Python (Pyodide: CPython in WebAssembly, its standard library, offline) where bubblewrap is installed: it runs in the same sandbox as `bash` (Pyodide's bridge to JavaScript would give code the server's process without it). Without bubblewrap, Python is refused saying so."),
      pythonMemoryMb: setting(z.number().int().min(128).max(16_384), 512,
        'Memory one Python run may hold (MiB, resident; Pyodide itself takes about 100); past it the run is stopped.'),
    }),
    memory: group({
      enabled: setting(z.boolean(), true,
        'Offer memory: a person who turns it on (Settings → Memory; off until they do, never for guests) has the model keep short facts about them with `remember`, `recall` and `forget` (policy name `capability:memory`), and their newest memories go with every answer\'s instructions.'),
      perPerson: setting(z.number().int().min(1).max(500), 200,
        'Memories one person may keep (each at most 500 characters); past it `remember` fails saying to forget some first.'),
      promptChars: setting(z.number().int().min(0).max(20_000), 2_000,
        'Characters of a person\'s newest memories put into every answer\'s instructions; `0`: none (the model recalls them with `recall` only).'),
    }),
  })
}
