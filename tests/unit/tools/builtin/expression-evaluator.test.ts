import { describe, expect, it } from 'vitest'
import { evaluateExpression, ExpressionError } from '../../../../server/lib/tools/builtin/expression-evaluator'

describe('evaluateExpression', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 / 4', 2.5],
    ['10 % 4', 2],
    ['2 ^ 10', 1024],
    ['2 ** 10', 1024],
    ['2 ^ 3 ^ 2', 512], // right-associative
    ['-2 ^ 2', -4], // exponent binds tighter than unary minus
    ['2 ^ -1', 0.5],
    ['--3', 3],
    ['+4', 4],
    ['5!', 120],
    ['3! ^ 2', 36],
    ['0.1 + 0.2', 0.3], // float noise tidied
    ['1e3 + .5', 1000.5],
    ['1_000_000 / 1000', 1000],
    ['6 × 7 ÷ 2', 21],
    ['sqrt(16) + cbrt(27)', 7],
    ['abs(-3.5)', 3.5],
    ['round(2.345, 2)', 2.35],
    ['round(2.5)', 3],
    ['floor(-1.5) + ceil(1.2) + trunc(-1.7)', -1],
    ['min(4, 2, 8) + max(1, 9)', 11],
    ['hypot(3, 4)', 5],
    ['log(1000)', 3],
    ['log(8, 2)', 3],
    ['ln(e)', 1],
    ['log2(1024)', 10],
    ['exp(0)', 1],
    ['sin(rad(90))', 1],
    ['deg(pi)', 180],
    ['cos(0) + tan(0)', 1],
    ['2 * PI', 6.28318530717959],
    ['factorial(10)', 3_628_800],
    ['pow(3, 4)', 81],
    ['  7  ', 7],
  ])('%s = %s', (expression, expected) => {
    expect(evaluateExpression(expression)).toBe(expected)
  })

  it.each([
    ['', /empty/],
    ['1 +', /unexpected end of expression/],
    ['(1 + 2', /expected "\)"/],
    ['1 + 2)', /unexpected "\)" at position 6/],
    ['2 $ 3', /unexpected character "\$" at position 3/],
    ['1 / 0', /division by zero/],
    ['5 % 0', /modulo by zero/],
    ['sqrt(-1)', /not a number/],
    ['10 ^ 400', /infinite/],
    ['171!', /only defined up to 170!/],
    ['2.5!', /non-negative integer/],
    ['sqrt', /needs parentheses/],
    ['sqrt(1, 2)', /sqrt\(\) takes 1 argument, got 2/],
    ['atan2(1)', /atan2\(\) takes 2 arguments, got 1/],
    ['min()', /min\(\) takes at least 1 argument/],
    ['round(1.5, 99)', /0 to 15 digits/],
    ['x + 1', /unknown name "x"/],
  ])('rejects %j with a clear error', (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(ExpressionError)
    expect(() => evaluateExpression(expression)).toThrow(message)
  })

  it.each([
    'constructor',
    '__proto__',
    'toString()',
    'valueOf(1)',
    'hasOwnProperty(1)',
    'process.exit(1)',
    'globalThis',
    'this',
    'Function("return 1")()',
    'sqrt.constructor',
    '[1]',
    '"a"',
    'a = 1',
    'import("fs")',
  ])('never reaches JavaScript: %j is refused', (expression) => {
    expect(() => evaluateExpression(expression)).toThrow(ExpressionError)
  })

  it('bounds nesting and length instead of overflowing the stack', () => {
    expect(() => evaluateExpression(`${'('.repeat(200)}1${')'.repeat(200)}`)).toThrow(/nested deeper than 64/)
    expect(() => evaluateExpression('-'.repeat(500) + '1')).toThrow(/nested deeper/)
    expect(() => evaluateExpression('1+'.repeat(600) + '1')).toThrow(/longer than 1000 characters/)
    expect(evaluateExpression(`${'('.repeat(30)}1${')'.repeat(30)}`)).toBe(1)
  })
})
