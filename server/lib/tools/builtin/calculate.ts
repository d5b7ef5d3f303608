import { z } from 'zod'
import { MAX_EXPRESSION_LENGTH, evaluateExpression } from './expression-evaluator'
import { defineServerTool } from '../define-tool'

export default defineServerTool({
  name: 'calculate',
  description: 'Evaluate an arithmetic expression exactly instead of guessing. Supports + - * / % ^ !, parentheses, '
    + 'pi, e, and functions such as sqrt, cbrt, abs, round(x, digits), floor, ceil, min, max, log (base 10), ln, log2, '
    + 'exp, sin/cos/tan (radians), rad(degrees), deg(radians), factorial.',
  parameters: z.object({
    expression: z.string().trim().min(1).max(MAX_EXPRESSION_LENGTH)
      .describe('The expression, e.g. "sqrt(2) * (3 + 4)^2" or "round(1234.5678 / 3, 2)".'),
  }),
  runtime: 'hybrid',
  idempotent: true,
  handler: ({ expression }) => ({ expression, result: evaluateExpression(expression) }),
})
