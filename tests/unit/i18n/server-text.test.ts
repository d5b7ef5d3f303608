/**
 * What the server says to a person, in their language: the request's language (the app's cookie,
 * else Accept-Language), a refusal answered in it while English keeps the code's own sentence, and
 * a job's notification written in the language of whoever started it.
 */
import { describe, expect, it } from 'vitest'
import { createEvent } from 'h3'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { requestLocale } from '../../../server/lib/http/request-locale'
import { answerMessage } from '../../../server/lib/http/domain-errors'
import { inLanguage, localize } from '../../../server/lib/i18n/server-text'
import { AuthError } from '../../../server/lib/auth/auth-errors'
import { BudgetExceededError } from '../../../server/lib/jobs/admission/budget'
import { notifyUnwatchedJob } from '../../../server/lib/jobs/notifications'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import { matchLocale } from '../../../shared/locales'
import type { BackgroundJob } from '../../../shared/types/job'

function eventWith(headers: Record<string, string>) {
  const request = new IncomingMessage(new Socket())
  request.headers = headers
  return createEvent(request, new ServerResponse(request))
}

describe('the server\'s own words in the reader\'s language', () => {
  it('reads the language from the app\'s cookie, else the browser\'s languages, else English', () => {
    expect(requestLocale(eventWith({ 'cookie': 'or3_locale=ja', 'accept-language': 'de-DE,de;q=0.9' }))).toBe('ja')
    expect(requestLocale(eventWith({ 'accept-language': 'fr-CA,fr;q=0.9,en;q=0.8' }))).toBe('fr')
    expect(requestLocale(eventWith({ 'accept-language': 'sv-SE, pt;q=0.7' }))).toBe('pt-BR')
    expect(requestLocale(eventWith({ 'cookie': 'or3_locale=xx', 'accept-language': 'ar-EG' }))).toBe('ar')
    expect(requestLocale(eventWith({ 'accept-language': ';;;, q=,' }))).toBe('en')
    expect(requestLocale(eventWith({}))).toBe('en')
    expect([matchLocale('zh-Hans-CN'), matchLocale('de-AT'), matchLocale('en-GB'), matchLocale('ko')]).toEqual(['zh-CN', 'de', 'en', undefined])
  })

  it('answers a refusal in the reader\'s language, and in English with the code\'s own sentence', () => {
    const refusal = new AuthError('wrong-password', 'That password is not the one of this account.').httpAnswer()
    expect(answerMessage(eventWith({ 'accept-language': 'de' }), refusal)).toBe('Das Passwort stimmt nicht.')
    expect(answerMessage(eventWith({ cookie: 'or3_locale=ar' }), refusal)).toBe('كلمة المرور غير صحيحة.')
    expect(answerMessage(eventWith({ 'accept-language': 'en-US' }), refusal)).toBe('That password is not the one of this account.')
    // Numbers in the message are written the language's way.
    const budget = new BudgetExceededError('tokens', 250000, Date.UTC(2026, 10, 28), Date.UTC(2026, 10, 27, 20)).httpAnswer()
    expect(answerMessage(eventWith({ 'accept-language': 'de' }), budget)).toBe('Du hast dein Tagesbudget von 250.000 Tokens aufgebraucht. Es beginnt um 00:00 UTC neu; ein Admin kann es erhöhen.')
    // A key a language lacks falls back to English's message, never to the key.
    expect(localize('fr', { key: 'auth.notAdmin' })).toBe('Seul un admin peut faire cela.')
    expect(inLanguage('fr', 'Only an admin may do this.', undefined)).toBe('Only an admin may do this.')
  })

  it('writes a job\'s notification in the language of whoever started it', async () => {
    const store = createMemoryJobStore()
    const base = { userId: 'u1', threadId: 't1', status: 'streaming', startedAt: 1, updatedAt: 1, model: 'm', type: 'chat' } as unknown as BackgroundJob
    const german = await notifyUnwatchedJob(store, { ...base, id: 'j1', request: { model: 'm', messages: [], fields: {}, locale: 'de' } }, { status: 'complete', completedAt: 2 } as never, '')
    expect(german).toMatchObject({ title: 'Deine Antwort ist fertig', body: 'Die Antwort ist fertig.' })
    const run = { model: 'm', messages: [], fields: {}, locale: 'ja' as const, workflow: { workflowId: 'w', prompt: '', definition: { name: 'Digest' }, startedVia: 'schedule' } }
    const japanese = await notifyUnwatchedJob(store, { ...base, id: 'j2', request: run } as unknown as BackgroundJob, { status: 'error', completedAt: 2, error: { message: 'boom' } } as never, '')
    expect(japanese?.title).toBe('「Digest」のスケジュール実行に失敗しました')
    const english = await notifyUnwatchedJob(store, { ...base, id: 'j3', request: { model: 'm', messages: [], fields: {} } }, { status: 'aborted', completedAt: 2 } as never, '')
    expect(english?.title).toBe('Your answer was stopped')
  })
})
