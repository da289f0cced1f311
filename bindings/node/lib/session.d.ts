/** Sessions: conversations whose turns run one after another. */
import type { ApprovalDecisions, PendingApproval } from './approvals.js'
import type { ContentPart, Json, JsonSchema, Message, StoredMessage } from './events.js'
import type { TurnOrigin } from './gate.js'
import type { Run, TypedRun } from './run.js'

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

/** Options of a typed turn (`session.sendTyped`). */
export interface TypedSendOptions extends SendOptions {
  /** The schema's name for the model (letters, digits, `_`, `-`); default: its `title`, else `answer`. */
  name?: string
  /**
   * Asks for the provider's strict schema mode where it has one (OpenAI's `strict`, which needs
   * every property required and `additionalProperties: false`). Default `false`.
   */
  strict?: boolean
}

/**
 * What `sendTyped` takes: a JSON Schema object, or an object that gives one through a
 * `toJSONSchema()` method or a `jsonSchema` property (schema libraries' wrappers).
 */
export type TypedSchema = JsonSchema | { toJSONSchema(): JsonSchema } | { jsonSchema: JsonSchema }

/** A conversation with the agent. Turns of one session run one after another. */
export declare class Session {
  private constructor()
  /** The session's id (a UUID). */
  readonly id: string
  /** What `JSON.stringify` writes of the session: its id. */
  toJSON(): { id: string }
  /** Starts a turn with a text message. Returns at once; the turn runs in the background. */
  send(text: string, options?: SendOptions): Run
  /** Starts a turn with a whole user message (several parts, images). */
  send(message: { role?: 'user'; content: ContentPart[] }, options?: SendOptions): Run
  /**
   * Starts a typed turn: the final answer must match `schema`; `outcome.structured` holds it,
   * parsed and checked (with one correction). A second bad answer ends the turn `error` with
   * `errorKind` `output.invalid`; a schema that is not valid JSON Schema, `output.schema`.
   * `T` is the answer's type (not checked at run time beyond the schema); `run.result()`
   * resolves with the answer.
   */
  sendTyped<T = Json>(text: string, schema: TypedSchema, options?: TypedSendOptions): TypedRun<T>
  /** A typed turn with a whole user message. */
  sendTyped<T = Json>(
    message: { role?: 'user'; content: ContentPart[] },
    schema: TypedSchema,
    options?: TypedSendOptions,
  ): TypedRun<T>
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
  /**
   * The approval a turn of this session is parked on (`awaiting_approval`: its gate answered
   * `'ask'`), or `null`. Persisted: a session reopened from the store after a restart has it.
   */
  pendingApproval(): PendingApproval | null
  /**
   * Answers the pending approval, one decision per call (keyed by call id), and continues the
   * parked turn in the returned run: approved calls run (with edited `arguments` when given),
   * rejected ones do not and the model reads why. Throws an `ApprovalError`, the approval still
   * pending, when a call has no decision (`approval_missing_decision`), a decision names another
   * call (`approval_unknown_call`) or edited arguments do not fit the tool's schema
   * (`approval_invalid_arguments`); `approval_not_pending` / `approval_expired` once it is gone.
   *
   * ```ts
   * const approval = session.pendingApproval()!
   * const run = session.resolveApproval(approval.id, { [approval.calls[0].callId]: 'approve' })
   * ```
   */
  resolveApproval(approvalId: string, decisions: ApprovalDecisions, options?: SendOptions): Run
  /**
   * Dismisses the pending approval without answering it: its calls do not run (the model reads
   * that with the next message), no turn starts, and `approval_resolved` (`dismissed`) goes to
   * `onEvent`. Rejects with an `ApprovalError` (`approval_not_pending`) when it is no longer
   * pending. A new message to the session dismisses it too.
   */
  dismissApproval(approvalId: string): Promise<void>
  /** Every stored message of the session, with sequence numbers. */
  messages(): Promise<StoredMessage[]>
  /** The messages the model would see on the next turn. */
  modelHistory(): Promise<Message[]>
  /**
   * What the session's finished turns cost in US dollars (sub-agents and compaction's
   * summaries included); `null` when a call's price was unknown. Kept in the agent's store,
   * so a session opened again after a restart goes on from what it spent, and so does its
   * budget. See docs/cost.md.
   */
  costUsd(): number | null
}
