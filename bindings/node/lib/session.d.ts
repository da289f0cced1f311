/** Sessions: conversations whose turns run one after another. */
import type { ContentPart, Message, StoredMessage } from './events.js'
import type { TurnOrigin } from './gate.js'
import type { Run } from './run.js'

/** A question the model asked the person (`ask_clarification`). */
export interface Clarification {
  id: string
  callId: string
  /** `confirm` (yes/no), `choice` (one of `options`) or `input` (free text). */
  kind: 'confirm' | 'choice' | 'input'
  title: string | null
  question: string
  options: string[]
  askedAtMs: number
  expiresAtMs: number
  /** Who started the turn that asked (the resumed turn acts for them too). */
  origin: TurnOrigin
}

/** Options of a turn. */
export interface SendOptions {
  /** Cancels the turn when aborted (an already aborted signal ends it at once). */
  signal?: AbortSignal
}

/** A conversation with the agent. Turns of one session run one after another. */
export declare class Session {
  private constructor()
  /** The session's id (a UUID). */
  readonly id: string
  /** Starts a turn with a text message. Returns at once; the turn runs in the background. */
  send(text: string, options?: SendOptions): Run
  /** Starts a turn with a whole user message (several parts, images). */
  send(message: { role?: 'user'; content: ContentPart[] }, options?: SendOptions): Run
  /** The question a turn of this session is parked on (`awaiting_user`), or `null`. */
  pendingClarification(): Clarification | null
  /** Answers the pending question; the parked turn goes on in a new run. */
  answerClarification(clarificationId: string, answer: string, options?: SendOptions): Run
  /**
   * Dismisses the pending question without answering it (the person closed it): no turn
   * starts; the model reads the dismissal with the next message, and `clarification_dismissed`
   * goes to `onEvent`. Rejects with a `ClarificationError` (`clarification_not_pending`) when
   * the question is no longer pending.
   */
  dismissClarification(clarificationId: string): Promise<void>
  /** Every stored message of the session, with sequence numbers. */
  messages(): Promise<StoredMessage[]>
  /** The messages the model would see on the next turn. */
  modelHistory(): Promise<Message[]>
}
