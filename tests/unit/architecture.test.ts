/**
 * The layering rules, enforced: dependency-cruiser runs .dependency-cruiser.cjs over server/, app/,
 * shared/ and convex/ (server/lib never imports server/utils, its folders import only those on
 * floors below, h3 only in lib/http, routes go through the facade, the app, shared/ and Convex's
 * functions never import server code, no run-time cycles), and the facade stays small and listed.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cruise, type IReporterOutput } from 'dependency-cruiser'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const ruleSet = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs'))

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter(entry => entry.isFile() && entry.name.endsWith('.ts'))
    .map(entry => join(entry.parentPath, entry.name))
}

/** Classes of `file` with more than `maxMethods` methods (accessors count), as `file name (n)`. */
function largeClasses(file: string, maxMethods: number): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isClassDeclaration(node)) {
      const methods = node.members.filter(member => ts.isMethodDeclaration(member) || ts.isGetAccessor(member) || ts.isSetAccessor(member)).length
      if (methods > maxMethods) found.push(`${relative(root, file)} ${node.name?.text ?? '(anonymous)'} (${methods})`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Files and classes of server/lib past the sizes one person holds in their head, known today: they may only shrink off this list. */
const KNOWN_LARGE = {
  files: [] as string[],
  classes: [] as string[],
}

/** Functions (declarations, methods, arrows) of `file` longer than `maxLines`, as `file:line name (n lines)`. */
function longFunctions(file: string, maxLines: number): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1
      const name = 'name' in node && node.name ? node.name.getText() : '(anonymous)'
      if (lines > maxLines) found.push(`${relative(root, file)}:${first + 1} ${name} (${lines} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The names server/utils auto-imports into every handler (what Nitro's scanner sees). */
function facadeNames(): string[] {
  const names = new Set<string>()
  for (const file of filesUnder(join(root, 'server/utils'))) {
    const source = readFileSync(file, 'utf8')
    for (const match of source.matchAll(/^export (?:async )?(?:function|const|class) (\w+)/gm)) names.add(match[1]!)
    for (const match of source.matchAll(/^export \{ (\w+) \} from/gm)) names.add(match[1]!)
  }
  return [...names].sort()
}

describe('architecture', () => {
  it('keeps the layers pointing one way, with no cycles', async () => {
    const previous = process.cwd()
    process.chdir(root)
    let result: IReporterOutput
    try {
      result = await cruise(['server', 'app', 'shared', 'convex'], { ruleSet, validate: true, outputType: 'json' })
    } finally {
      process.chdir(previous)
    }
    const output = typeof result.output === 'string' ? JSON.parse(result.output) : result.output
    const violations = output.summary.violations.map((violation: { rule: { name: string }, from: string, to: string }) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
    expect(output.summary.totalCruised, 'dependency-cruiser read the tree').toBeGreaterThan(100)
    expect(violations).toEqual([])
  }, 60_000)

  it('gives every folder of server/lib a floor, so a new folder is placed in the order before it is used', () => {
    const floors: string[][] = ruleSet.LIB_FLOORS
    const folders = readdirSync(join(root, 'server/lib'), { withFileTypes: true }).filter(entry => entry.isDirectory()).map(entry => entry.name)
    expect(folders.length).toBeGreaterThan(10)
    expect(folders.filter(folder => !floors.flat().includes(folder)), 'folders of server/lib missing from LIB_FLOORS in .dependency-cruiser.cjs').toEqual([])
    expect(floors.flat().filter(folder => !folders.includes(folder)), 'LIB_FLOORS names a folder that is gone').toEqual([])
  })

  it('auto-imports only the two names of nuxt-auth-utils the server uses (modules/auth-utils-imports.ts)', () => {
    // Written by `nuxt prepare` (npm install's postinstall, and `nuxt typecheck` before the tests).
    const declarations = readFileSync(join(root, '.nuxt/types/nitro-imports.d.ts'), 'utf8')
    const names = [...declarations.matchAll(/const (\w+): typeof import\('[^']*nuxt-auth-utils[^']*'\)/g)].map(match => match[1]).sort()
    expect(names).toEqual(['clearUserSession', 'replaceUserSession'])
  })

  it('has the app import values of shared/ through #shared (a relative path does not resolve in the server render)', () => {
    const appFiles = readdirSync(join(root, 'app'), { withFileTypes: true, recursive: true })
      .filter(entry => entry.isFile() && /\.(?:ts|vue)$/.test(entry.name))
      .map(entry => join(entry.parentPath, entry.name))
    expect(appFiles.length).toBeGreaterThan(50)
    const relativeValueImports = appFiles.flatMap(file => [...readFileSync(file, 'utf8').matchAll(/^import (?!type )[^\n]*from '(?:\.\.\/)+shared\/[^']*'/gm)].map(match => `${relative(root, file)}: ${match[0]}`))
    expect(relativeValueImports).toEqual([])
  })

  it('imports values into server files by relative path, never through ~~/ (a layer on top, such as the tool-discovery fixture, resolves ~~ to its own root)', () => {
    const serverFiles = filesUnder(join(root, 'server')).filter(file => !file.includes('/lib/'))
    const aliasedValueImports = serverFiles.flatMap(file => [...readFileSync(file, 'utf8').matchAll(/^import (?!type )[^\n]*from '~~\/[^']*'/gm)].map(match => `${relative(root, file)}: ${match[0]}`))
    expect(aliasedValueImports).toEqual([])
  })

  it('auto-imports at most 38 server names, each listed in docs/architecture.md', () => {
    const names = facadeNames()
    const readme = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
    expect(names.length, names.join(', ')).toBeLessThanOrEqual(38)
    for (const name of names) expect(readme, `docs/architecture.md does not list the facade's ${name}`).toContain(`\`${name}\``)
  })

  it('keeps the run core in small steps: no function of server/lib/jobs, agent or workflows passes 80 lines', () => {
    const files = ['jobs', 'agent', 'workflows'].flatMap(directory => filesUnder(join(root, 'server/lib', directory)))
    expect(files.length).toBeGreaterThan(30)
    expect(files.flatMap(file => longFunctions(file, 80))).toEqual([])
  })

  it('sends a run\'s events through its one sink: no other file of jobs/run calls the live hub or the store writer', () => {
    const runFiles = filesUnder(join(root, 'server/lib/jobs/run')).filter(file => !file.endsWith('run-events.ts'))
    const calls: string[] = []
    for (const file of runFiles) {
      const source = readFileSync(file, 'utf8')
      for (const match of source.matchAll(/\b(hub|writer)\.(\w+)\(/g)) {
        // Opening the live view (before the sink exists) is the harness's.
        if (file.endsWith('harness.ts') && match[0] === 'hub.open(') continue
        calls.push(`${relative(root, file)}: ${match[0]}`)
      }
    }
    expect(calls).toEqual([])
  })

  it('keeps the job store port at ten methods, each backend implementing it once (waits and notifications are ports of their own)', () => {
    const file = join(root, 'server/lib/stores/jobs/job-store.ts')
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    const port = source.statements.find((node): node is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(node) && node.name.text === 'JobStore')!
    const methods = port.members.filter(member => ts.isMethodSignature(member)).map(member => member.name.getText(source))
    expect(methods.length, methods.join(', ')).toBeLessThanOrEqual(10)
    expect(port.heritageClauses, 'the port extends nothing').toBeUndefined()
  })

  it('keeps server/lib files under 400 lines and classes at 20 methods or fewer (those known larger only shrink)', () => {
    const files = filesUnder(join(root, 'server/lib'))
    const longFiles = files.filter(file => readFileSync(file, 'utf8').split('\n').length > 400).map(file => relative(root, file))
    expect(longFiles.filter(file => !KNOWN_LARGE.files.includes(file)), 'split these along their concepts').toEqual([])
    const classes = files.flatMap(file => largeClasses(file, 20))
    expect(classes.filter(entry => !KNOWN_LARGE.classes.some(name => entry.includes(` ${name} (`))), 'split these along their concepts').toEqual([])
    // The list shrinks with the code: an entry that no longer applies goes.
    expect(KNOWN_LARGE.files.filter(file => !longFiles.includes(file))).toEqual([])
    expect(KNOWN_LARGE.classes.filter(name => !classes.some(entry => entry.includes(` ${name} (`)))).toEqual([])
  })

  it('gives every server/utils export a line of JSDoc', () => {
    for (const file of filesUnder(join(root, 'server/utils'))) {
      const lines = readFileSync(file, 'utf8').split('\n')
      lines.forEach((line, index) => {
        if (!/^export (?:async )?(?:function|const|class|\{ \w+ \} from)/.test(line)) return
        let above = index - 1
        while (above >= 0 && lines[above]!.trim() === '') above--
        expect(lines[above]?.trim().endsWith('*/'), `${relative(root, file)}:${index + 1} has no JSDoc`).toBe(true)
      })
    }
  })
})
