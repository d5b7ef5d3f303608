/**
 * A small, safe arithmetic evaluator for the `calculate` tool. It parses the expression into a
 * tree and evaluates it over a fixed whitelist of operators, functions and constants held in Maps:
 * there is no `eval`, no property access and no way to name anything outside the whitelist.
 * (Over 250 lines on purpose: one grammar, whose tokenizer, parser and evaluator share the
 * whitelists and are read together.)
 *
 * Grammar (lowest to highest precedence):
 *   expression := additive
 *   additive   := multiplicative (("+" | "-") multiplicative)*
 *   multiplicative := unary (("*" | "/" | "%") unary)*
 *   unary      := ("+" | "-") unary | power
 *   power      := postfix (("^" | "**") unary)?        right-associative, binds tighter than unary minus on its left
 *   postfix    := primary "!"*
 *   primary    := number | constant | function "(" arguments ")" | "(" expression ")"
 */

export const MAX_EXPRESSION_LENGTH = 1000
const MAX_NESTING_DEPTH = 64

/** Raised for any expression that cannot be evaluated; the message says what to fix. */
export class ExpressionError extends Error {
  override name = 'ExpressionError'
}

type Token =
  | { kind: 'number', value: number, position: number }
  | { kind: 'name', value: string, position: number }
  | { kind: 'operator', value: string, position: number }
  | { kind: 'end', position: number }

type MathFunction = { arity: [min: number, max: number], apply: (...args: number[]) => number }

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new ExpressionError(`factorial needs a non-negative integer, got ${n}`)
  if (n > 170) throw new ExpressionError('factorial is only defined up to 170! in double precision')
  let result = 1
  for (let i = 2; i <= n; i++) result *= i
  return result
}

function roundTo(value: number, digits = 0): number {
  if (!Number.isInteger(digits) || digits < 0 || digits > 15) {
    throw new ExpressionError('round(x, digits) takes 0 to 15 digits')
  }
  const factor = 10 ** digits
  return Math.round((value + Number.EPSILON) * factor) / factor
}

const FUNCTIONS = new Map<string, MathFunction>([
  ['abs', { arity: [1, 1], apply: Math.abs }],
  ['sqrt', { arity: [1, 1], apply: Math.sqrt }],
  ['cbrt', { arity: [1, 1], apply: Math.cbrt }],
  ['exp', { arity: [1, 1], apply: Math.exp }],
  ['ln', { arity: [1, 1], apply: Math.log }],
  ['log', { arity: [1, 2], apply: (x, base) => (base === undefined ? Math.log10(x) : Math.log(x) / Math.log(base)) }],
  ['log10', { arity: [1, 1], apply: Math.log10 }],
  ['log2', { arity: [1, 1], apply: Math.log2 }],
  ['sin', { arity: [1, 1], apply: Math.sin }],
  ['cos', { arity: [1, 1], apply: Math.cos }],
  ['tan', { arity: [1, 1], apply: Math.tan }],
  ['asin', { arity: [1, 1], apply: Math.asin }],
  ['acos', { arity: [1, 1], apply: Math.acos }],
  ['atan', { arity: [1, 1], apply: Math.atan }],
  ['atan2', { arity: [2, 2], apply: Math.atan2 }],
  ['sinh', { arity: [1, 1], apply: Math.sinh }],
  ['cosh', { arity: [1, 1], apply: Math.cosh }],
  ['tanh', { arity: [1, 1], apply: Math.tanh }],
  ['floor', { arity: [1, 1], apply: Math.floor }],
  ['ceil', { arity: [1, 1], apply: Math.ceil }],
  ['trunc', { arity: [1, 1], apply: Math.trunc }],
  ['sign', { arity: [1, 1], apply: Math.sign }],
  ['round', { arity: [1, 2], apply: roundTo }],
  ['min', { arity: [1, 100], apply: Math.min }],
  ['max', { arity: [1, 100], apply: Math.max }],
  ['hypot', { arity: [1, 100], apply: Math.hypot }],
  ['pow', { arity: [2, 2], apply: Math.pow }],
  ['factorial', { arity: [1, 1], apply: factorial }],
  ['deg', { arity: [1, 1], apply: radians => (radians * 180) / Math.PI }],
  ['rad', { arity: [1, 1], apply: degrees => (degrees * Math.PI) / 180 }],
])

const CONSTANTS = new Map<string, number>([
  ['pi', Math.PI],
  ['e', Math.E],
  ['tau', 2 * Math.PI],
  ['phi', (1 + Math.sqrt(5)) / 2],
])

/** Names an expression may use, for error messages and the tool description. */
export const SUPPORTED_FUNCTIONS = [...FUNCTIONS.keys()]
export const SUPPORTED_CONSTANTS = [...CONSTANTS.keys()]

const NUMBER_PATTERN = /^(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/
const NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*/
const OPERATORS = ['**', '+', '-', '*', '×', '/', '÷', '%', '^', '!', '(', ')', ',']

function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  let position = 0
  while (position < source.length) {
    const rest = source.slice(position)
    const whitespace = /^\s+/.exec(rest)
    if (whitespace) {
      position += whitespace[0].length
      continue
    }
    const number = NUMBER_PATTERN.exec(rest)
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0].replaceAll('_', '')), position })
      position += number[0].length
      continue
    }
    const name = NAME_PATTERN.exec(rest)
    if (name) {
      tokens.push({ kind: 'name', value: name[0].toLowerCase(), position })
      position += name[0].length
      continue
    }
    const operator = OPERATORS.find(candidate => rest.startsWith(candidate))
    if (!operator) {
      throw new ExpressionError(`unexpected character "${rest[0]}" at position ${position + 1}`)
    }
    // Normalise the typographic forms people paste.
    const value = operator === '×' ? '*' : operator === '÷' ? '/' : operator === '**' ? '^' : operator
    tokens.push({ kind: 'operator', value, position })
    position += operator.length
  }
  tokens.push({ kind: 'end', position })
  return tokens
}

class Parser {
  private index = 0
  private depth = 0

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.additive()
    const next = this.peek()
    if (next.kind !== 'end') throw this.unexpected(next)
    return value
  }

  private peek(): Token {
    return this.tokens[this.index]!
  }

  private take(): Token {
    return this.tokens[this.index++]!
  }

  private isOperator(value: string): boolean {
    const token = this.peek()
    return token.kind === 'operator' && token.value === value
  }

  private expect(value: string): void {
    if (!this.isOperator(value)) throw this.unexpected(this.peek(), `"${value}"`)
    this.index++
  }

  private unexpected(token: Token, expected?: string): ExpressionError {
    const what = token.kind === 'end' ? 'end of expression' : `"${token.value}"`
    const hint = expected ? `, expected ${expected}` : ''
    return new ExpressionError(`unexpected ${what} at position ${token.position + 1}${hint}`)
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      throw new ExpressionError(`expression is nested deeper than ${MAX_NESTING_DEPTH} levels`)
    }
  }

  private additive(): number {
    let value = this.multiplicative()
    while (this.isOperator('+') || this.isOperator('-')) {
      const operator = this.take() as { value: string }
      const right = this.multiplicative()
      value = operator.value === '+' ? value + right : value - right
    }
    return value
  }

  private multiplicative(): number {
    let value = this.unary()
    while (this.isOperator('*') || this.isOperator('/') || this.isOperator('%')) {
      const operator = this.take() as { value: string }
      const right = this.unary()
      if (operator.value === '*') {
        value *= right
      } else {
        if (right === 0) throw new ExpressionError(operator.value === '/' ? 'division by zero' : 'modulo by zero')
        value = operator.value === '/' ? value / right : value % right
      }
    }
    return value
  }

  private unary(): number {
    if (this.isOperator('-') || this.isOperator('+')) {
      const operator = this.take() as { value: string }
      this.enter()
      const operand = this.unary()
      this.depth--
      return operator.value === '-' ? -operand : operand
    }
    return this.power()
  }

  private power(): number {
    const base = this.postfix()
    if (this.isOperator('^')) {
      this.index++
      this.enter()
      const exponent = this.unary()
      this.depth--
      return base ** exponent
    }
    return base
  }

  private postfix(): number {
    let value = this.primary()
    while (this.isOperator('!')) {
      this.index++
      value = factorial(value)
    }
    return value
  }

  private primary(): number {
    const token = this.take()
    if (token.kind === 'number') return token.value
    if (token.kind === 'operator' && token.value === '(') {
      this.enter()
      const value = this.additive()
      this.expect(')')
      this.depth--
      return value
    }
    if (token.kind === 'name') return this.nameReference(token.value, token.position)
    throw this.unexpected(token, 'a number, a function or "("')
  }

  private nameReference(name: string, position: number): number {
    const fn = FUNCTIONS.get(name)
    if (fn) {
      if (!this.isOperator('(')) throw new ExpressionError(`function "${name}" at position ${position + 1} needs parentheses, e.g. ${name}(2)`)
      this.index++
      this.enter()
      const args: number[] = []
      if (!this.isOperator(')')) {
        args.push(this.additive())
        while (this.isOperator(',')) {
          this.index++
          args.push(this.additive())
        }
      }
      this.expect(')')
      this.depth--
      const [min, max] = fn.arity
      if (args.length < min || args.length > max) {
        const expected = min === max ? `${min}` : max >= 100 ? `at least ${min}` : `${min} to ${max}`
        throw new ExpressionError(`${name}() takes ${expected} argument${expected === '1' ? '' : 's'}, got ${args.length}`)
      }
      return fn.apply(...args)
    }
    const constant = CONSTANTS.get(name)
    if (constant !== undefined) return constant
    throw new ExpressionError(
      `unknown name "${name}" at position ${position + 1}; use numbers, operators (+ - * / % ^ !), `
      + `the constants ${SUPPORTED_CONSTANTS.join(', ')} or a function such as sqrt(), log(), sin()`,
    )
  }
}

/** Cleans floating-point noise (0.1 + 0.2 → 0.3) while keeping 15 significant digits. */
function tidy(value: number): number {
  return Number.parseFloat(value.toPrecision(15))
}

/**
 * Evaluates an arithmetic expression. Throws `ExpressionError` with a message a person (or a
 * model) can act on when the expression is malformed or has no finite value.
 *
 * @example evaluateExpression('2 * (3 + 4) ^ 2') // 98
 */
export function evaluateExpression(expression: string): number {
  if (typeof expression !== 'string' || expression.trim() === '') {
    throw new ExpressionError('the expression is empty')
  }
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`)
  }
  const value = new Parser(tokenize(expression)).parse()
  if (Number.isNaN(value)) throw new ExpressionError('the result is not a number (e.g. the square root of a negative number)')
  if (!Number.isFinite(value)) throw new ExpressionError('the result is infinite or too large to represent')
  return tidy(value)
}
