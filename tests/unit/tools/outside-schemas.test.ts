import { describe, expect, it } from 'vitest'
import { answerMismatch, answerSchemaProblem, compiledSchemaCount, MAX_ANSWER_VALUES, MAX_SCHEMA_NODES } from '../../../server/lib/tools/outside-schemas'

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

  it('refuses uniqueItems (pairwise comparison), also in a schema stored before it was refused, and answers past the value bound', () => {
    const distinct = { type: 'array', uniqueItems: true, items: { type: 'object' } }
    expect(answerSchemaProblem({ type: 'object', properties: { list: distinct } }, 'resultSchema')).toMatch(/uses "uniqueItems" over items that are not all of one declared scalar type.*check duplicates in the tool/)
    // Over declared scalars ajv uses a map (linear): a multi-select form keeps it.
    const tags = { type: 'array', uniqueItems: true, items: { type: 'string', enum: ['a', 'b'] } }
    expect(answerSchemaProblem({ type: 'object', properties: { tags } }, 'requestedSchema')).toBeUndefined()
    expect(answerMismatch(tags, ['a', 'a'])).toMatch(/must NOT have duplicate items/)
    const many = Array.from({ length: 6_533 }, (_, index) => ({ i: index }))
    const before = compiledSchemaCount()
    expect(answerMismatch(distinct, many)).toMatch(/cannot be checked: what was asked uses "uniqueItems"/)
    expect(compiledSchemaCount()).toBe(before)
    expect(answerMismatch({ type: 'array' }, Array.from({ length: MAX_ANSWER_VALUES }, () => 1))).toMatch(/holds more than 20,000 values/)
    let deep: unknown = 1
    for (let level = 0; level < 40; level++) deep = [deep]
    expect(answerMismatch({ type: 'array' }, deep)).toMatch(/nests deeper than 32 levels/)
    expect(answerMismatch({ type: 'array', items: { type: 'object' } }, many)).toBeUndefined()
  })
})
