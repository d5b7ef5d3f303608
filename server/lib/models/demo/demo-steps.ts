/**
 * How the offline demo model answers a workflow's steps: an agent step's instructions (research,
 * draft, critique, polish, final answer) done to the text it was given, so the shipped examples run
 * offline to an answer made of their steps' outputs; and a loop's yes-or-no question, answered yes
 * once a draft was revised after its critique.
 */

/** How a workflow loop's yes-or-no question ends (workflows/loop.ts). */
export const YES_OR_NO_QUESTION = 'Answer with exactly one word: yes or no.'
/** What a step that revised a draft after its critique writes (stepAnswer). */
export const REVISED_MARK = '_Revised after the critique:'

/** `text` on one line, cut at a sentence end near `chars`. */
function gist(text: string, chars = 400): string {
  const line = text.replace(/\s+/g, ' ').trim()
  if (line.length <= chars) return line
  const cut = line.slice(0, chars)
  const end = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('? '), cut.lastIndexOf('! '))
  return end > chars / 2 ? cut.slice(0, end + 1) : `${cut}…`
}

/** The part of a step's text after its `name:` heading, up to the next heading ("Research:", "Draft:"…). */
function section(text: string, name: string): string | undefined {
  const heading = text.startsWith(`${name}:`) ? 0 : text.indexOf(`\n${name}:`) + 1
  if (heading === 0 && !text.startsWith(`${name}:`)) return undefined
  const from = heading + name.length + 1
  const next = text.slice(from).search(/\n\n[A-Z][a-z]+:/)
  return text.slice(from, next < 0 ? undefined : from + next).trim() || undefined
}

/**
 * A workflow step on the demo model: what its instructions (the system prompt) ask, done to the
 * text it was given, so each step builds on the one before and the run ends with an answer made
 * of its steps' outputs (the shipped examples: research → draft → critique → answer, draft and
 * polish). Undefined for instructions these rules do not know.
 */
export function stepAnswer(instructions: string, text: string): string | undefined {
  if (!instructions || !text) return undefined
  if (/\bfinal answer\b|fixing what/i.test(instructions)) {
    const draft = (section(text, 'Draft') ?? text).replace(/^Draft:\s*/i, '')
    const critique = section(text, 'Critique')
    return `${gist(draft, 1_200)}${critique ? `\n\n${REVISED_MARK} ${gist(critique.replace(/^Critique:\s*/i, ''), 200)}_` : ''}`
  }
  if (/\bcritique|gets wrong|leaves out/i.test(instructions)) {
    return `Critique: the draft answers the question directly. It should say where "${gist(text.replace(/^Draft:\s*/i, ''), 80)}" comes from, and add what a fuller answer would mention; with an OpenRouter key a real model goes further.`
  }
  if (/\bpolish/i.test(instructions)) return gist(text.replace(/^Draft:\s*/i, ''), 1_200)
  if (/\bdraft\b/i.test(instructions)) {
    const question = section(text, 'Question')
    const research = section(text, 'Research') ?? text
    return `Draft: ${question ? `${gist(question, 200)} ` : ''}${gist(research, 800)}`
  }
  if (/\bresearch|\bfacts\b/i.test(instructions)) {
    return `The question: "${gist(text, 200)}". My tools (the time, arithmetic, unit conversion, demo weather) have nothing to add to it, so the next steps work from the question itself.`
  }
  return undefined
}
