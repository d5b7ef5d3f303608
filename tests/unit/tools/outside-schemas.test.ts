import { describe, expect, it } from 'vitest'
import { answerMismatch, answerSchemaProblem, compiledSchemaCount, MAX_SCHEMA_NODES } from '../../../server/lib/tools/outside-schemas'

const location = { type: 'object', properties: { precision: { type: 'string', enum: ['city', 'exact'] } } }
/** A schema of `clauses` allOf/not clauses: slow to compile (~1 ms a subschema), small as text. */
const clauses = (count: number) => ({ type: 'object', allOf: Array.from({ length: count }, (_, index) => ({ not: { properties: { [`p${index % 7}`]: { minLength: index } } } })) })

describe('schemas from outside', () => {
  it('accepts a plain schema and names what is wrong with others', () => {
    expect(answerSchemaProblem(location, 'parameters')).toBeUndefined()
    expect(answerSchemaProblem([], 'parameters')).toBe('parameters must be a JSON Schema object')
    expect(answerSchemaProblem({ type: 'object', properties: { q: { type: 'string', pattern: '(a+)+$' } } }, 'parameters')).toMatch(/uses "pattern"/)
    expect(answerSchemaProblem({ $ref: 'https://example.com/s.json' }, 'resultSchema')).toMatch(/uses "\$ref"/)
    expect(answerSchemaProblem({ type: 'object', description: 'x'.repeat(17_000) }, 'parameters')).toMatch(/at most 16384 are accepted/)
    let deep: Record<string, unknown> = { type: 'string' }
    for (let level = 0; level < 12; level++) deep = { type: 'object', properties: { a: deep } }
    expect(answerSchemaProblem(deep, 'parameters')).toMatch(/nests deeper than 10 levels/)
    expect(answerSchemaProblem({ type: 'object', properties: { n: { type: 'string', minLength: 'three' } } }, 'resultSchema')).toMatch(/resultSchema is not a valid JSON Schema at "properties.n.minLength": must be integer/)
  })

  it('refuses a schema of many clauses before anything compiles it, and does not count data as subschemas', () => {
    const before = compiledSchemaCount()
    expect(answerSchemaProblem(clauses(MAX_SCHEMA_NODES), 'parameters')).toMatch(`has more than ${MAX_SCHEMA_NODES} subschemas`)
    // Checking schemas compiles none of them: a request that declares many costs no compilation.
    for (let index = 0; index < 50; index++) expect(answerSchemaProblem(clauses(10 + index % 10), 'parameters')).toBeUndefined()
    expect(compiledSchemaCount()).toBe(before)
    const manyChoices = { type: 'object', properties: { pick: { enum: Array.from({ length: 500 }, (_, index) => ({ id: index })) } } }
    expect(answerSchemaProblem(manyChoices, 'parameters')).toBeUndefined()
  })

  it('compiles a schema when an answer is checked against it, fills defaults, and keeps at most 200 compiled', () => {
    const form = { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer', default: 42 } }, required: ['name'] }
    const answer: Record<string, unknown> = { name: 'Ada' }
    expect(answerMismatch(form, answer)).toBeUndefined()
    expect(answer).toEqual({ name: 'Ada', count: 42 })
    expect(answerMismatch(form, { count: 1 })).toBe('the answer must have required property \'name\'')
    for (let index = 0; index < 300; index++) answerMismatch({ type: 'object', properties: { [`field${index}`]: { type: 'string' } } }, {})
    expect(compiledSchemaCount()).toBeLessThanOrEqual(200)
  })
})
