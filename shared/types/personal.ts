/**
 * What a person sets for themselves: preferences (display name, default model, theme, custom
 * instructions), saved chat presets, folders for conversations; and what they share and rate.
 */
import type { AppLocale } from '../locales'
import type { ThreadMessage } from './thread'

/** How a conversation asks the model: kept with the thread, applied to every answer and regenerate in it. */
export interface ChatSettings {
  /** The system message of every request (replaces the person's custom instructions in this chat). */
  systemPrompt?: string
  /** 0–2. */
  temperature?: number
  /** 0–1. */
  topP?: number
  /** The most tokens an answer may write (the role's cap still applies). */
  maxTokens?: number
  /** Where the model supports reasoning. */
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high'
  /** Knowledge bases the model searches in this chat (`search_knowledge`), and cites. */
  knowledgeBaseIds?: string[]
}

/** A named set of chat settings a person saves and picks ("Concise", "Code reviewer"). */
export interface ChatPreset {
  id: string
  name: string
  settings: ChatSettings
}

/** A folder of conversations (a conversation is in at most one). */
export interface ChatFolder {
  id: string
  name: string
  createdAt: number
}

/** A person's own preferences (`GET|PUT /api/me/preferences`). */
export interface UserPreferences {
  /** Shown instead of the sign-in name (absent: the sign-in name). */
  displayName?: string
  /** The model a new chat starts with. */
  defaultModel?: string
  theme?: 'light' | 'dark' | 'system'
  /** The language the app speaks to them (absent: their browser's). */
  locale?: AppLocale
  /** What the assistant should know about the person and how to answer: the system message of every chat without its own. */
  customInstructions?: string
}

/** `GET|PUT /api/me/preferences`: the person's preferences, and the default model their groups give (used when they chose none). */
export interface MyPreferences extends UserPreferences {
  teamDefaultModel?: string
}

/** A share link as its owner lists it (`GET /api/shares`). */
export interface ShareLinkSummary {
  id: string
  threadId: string
  title: string
  /** The full link (shown to its owner only). */
  url: string
  messageCount: number
  includeAttachments: boolean
  createdAt: number
}

/** A shared conversation as a viewer sees it (`GET /api/shares/:token`): the snapshot taken when it was shared. */
export interface SharedConversation {
  title: string
  sharedAt: number
  /** Who shared it (their display name). */
  sharedBy: string
  messages: Array<Pick<ThreadMessage, 'id' | 'role' | 'content' | 'createdAt' | 'model' | 'attachments'>>
}

/** 👍 / 👎 on an answer, with an optional reason. */
export interface MessageFeedback {
  rating: 'up' | 'down'
  reason?: string
  at: number
}

/** The reasons a 👎 offers before free text. */
export const FEEDBACK_REASONS = ['Not accurate', 'Not helpful', 'Did not follow instructions', 'Too long', 'Unsafe or offensive'] as const

/** What the admin page shows about feedback (`GET /api/admin/feedback`). */
export interface FeedbackReport {
  /** Counts per model and UTC day (`YYYY-MM-DD`), newest day first. */
  byModelAndDay: Array<{ model: string, day: string, up: number, down: number }>
  /** The latest 👎, newest first: the reason and the model, never the answer (an admin does not read people's conversations). */
  recentDown: Array<{ model: string, reason?: string, at: number }>
}

/** Limits on what a person keeps, shown by the forms (the server checks the same ones). */
export const PERSONAL_LIMITS = {
  displayNameMax: 64,
  instructionsMax: 4_000,
  systemPromptMax: 8_000,
  presetNameMax: 40,
  presetsPerUser: 20,
  folderNameMax: 60,
  foldersPerUser: 100,
  sharesPerUser: 100,
  feedbackReasonMax: 500,
} as const
