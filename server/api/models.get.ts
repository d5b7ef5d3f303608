/**
 * Lists the models a user can pick. A user's own OpenRouter key travels in `X-OpenRouter-Key`;
 * it is used for this request only and never stored or logged.
 */
export default defineEventHandler(event => listModelsForRequest(event))
