/** The bodies of a person's settings, presets, folders, shares and feedback, checked alike by forms and the server. */
import { APP_LOCALE_CODES } from '../locales'
import { z } from 'zod'
import { PERSONAL_LIMITS } from '../types/personal'
import { KNOWLEDGE_BASES_PER_CHAT } from '../types/knowledge'
import { MAX_THREAD_TITLE } from '../limits'
import { accountPassword } from './account'

const noControl = (value: string) => !/[\p{Cc}\p{Cf}]/u.test(value)
const shortName = (max: number) => z.string().trim().min(1, 'is required').max(max, `must be at most ${max} characters`).refine(noControl, 'must not contain control or formatting characters')

/** A chat's settings: every field optional; `null` clears one when patching. */
export const chatSettingsSchema = z.object({
  systemPrompt: z.string().trim().max(PERSONAL_LIMITS.systemPromptMax, `must be at most ${PERSONAL_LIMITS.systemPromptMax} characters`).optional(),
  temperature: z.number().min(0, 'must be between 0 and 2').max(2, 'must be between 0 and 2').optional(),
  topP: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
  maxTokens: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000').optional(),
  reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high']).optional(),
  knowledgeBaseIds: z.array(z.string().min(1).max(64)).max(KNOWLEDGE_BASES_PER_CHAT, `must be at most ${KNOWLEDGE_BASES_PER_CHAT} knowledge bases`).optional(),
}).strict()

/** `PUT /api/me/preferences`: the whole set (a field left out is cleared). */
export const preferencesSchema = z.object({
  displayName: shortName(PERSONAL_LIMITS.displayNameMax).optional(),
  defaultModel: z.string().trim().min(1).max(200).optional(),
  theme: z.enum(['light', 'dark', 'system']).optional(),
  locale: z.enum(APP_LOCALE_CODES).optional(),
  customInstructions: z.string().trim().max(PERSONAL_LIMITS.instructionsMax, `must be at most ${PERSONAL_LIMITS.instructionsMax} characters`).optional(),
}).strict()

/** `POST /api/me/presets`, `PUT /api/me/presets/:id`. */
export const presetSchema = z.object({ name: shortName(PERSONAL_LIMITS.presetNameMax), settings: chatSettingsSchema }).strict()

/** `POST /api/folders`, `PATCH /api/folders/:id`. */
export const folderSchema = z.object({ name: shortName(PERSONAL_LIMITS.folderNameMax) }).strict()

/** `PATCH /api/threads/:id`: rename, pin, file into a folder (null: out of any), chat settings (null: none). */
export const threadPatchSchema = z.object({
  title: z.string().trim().min(1, 'give the conversation a name').max(MAX_THREAD_TITLE).optional(),
  pinned: z.boolean().optional(),
  folderId: z.string().uuid('must be a folder id').nullable().optional(),
  settings: chatSettingsSchema.nullable().optional(),
}).strict().refine(body => Object.keys(body).length > 0, 'send title, pinned, folderId or settings')

/** `POST /api/threads/:id/share`. */
export const shareSchema = z.object({ includeAttachments: z.boolean().default(false) }).strict()

/** `PUT /api/threads/:id/messages/:messageId/feedback` (`DELETE` takes it back). */
export const feedbackSchema = z.object({
  rating: z.enum(['up', 'down']),
  reason: z.string().trim().max(PERSONAL_LIMITS.feedbackReasonMax, `must be at most ${PERSONAL_LIMITS.feedbackReasonMax} characters`).optional(),
}).strict()

/** `PUT /api/me/password`. */
/** `DELETE /api/me`: the person's password, confirming they mean it. */
export const accountDeletionSchema = z.object({
  password: z.string().min(1, 'is required').max(256),
}).strict()

export const passwordChangeSchema = z.object({
  currentPassword: z.string().min(1, 'is required').max(256),
  newPassword: accountPassword,
}).strict()
