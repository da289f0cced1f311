/** Values, events and messages: what runs report and what sessions store. */
import type { PendingApproval, RememberScope } from './approvals.js'
import type { TurnOrigin } from './gate.js'

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
/** A JSON Schema object (the arguments of a tool). */
export type JsonSchema = { [key: string]: unknown }

/** Token counts reported by the provider. */
export interface Usage {
  inputTokens: number
  outputTokens: number
  /** Input tokens read from the provider's cache (included in `inputTokens`). */
  cachedInputTokens: number
  /** Input tokens written to the provider's cache (Anthropic, OpenRouter; included in `inputTokens`). */
  cacheWriteTokens: number
  reasoningTokens: number
}

/**
 * How a turn ended. `awaiting_user`: parked on a question (`ask_clarification`);
 * `awaiting_approval`: parked until the person approves or rejects a gated call (the gate
 * answered `'ask'`; see `outcome.approval` and `session.resolveApproval`); `awaiting_tools`:
 * parked until the host runs the calls of the turn's external tools (a Rust host's
 * `Session::send_with_tools`; not offered through this binding yet).
 */
export type OutcomeStatus =
  | 'done'
  | 'denied'
  | 'capped'
  | 'cancelled'
  | 'error'
  | 'awaiting_user'
  | 'awaiting_approval'
  | 'awaiting_tools'

/** The result of a turn; `T` is the type of a typed turn's answer (`structured`). */
export interface Outcome<T = Json> {
  status: OutcomeStatus
  /** The last assistant text of the turn (the answer, for `done`; a typed answer's raw JSON text). */
  finalText: string | null
  /**
   * The answer of a typed turn (`session.sendTyped`), parsed and checked against its schema.
   * Absent for other turns and when the turn did not end `done`.
   */
  structured?: T
  /** Model calls made. */
  iterations: number
  /** Tool calls requested by the model (run or not). */
  toolCalls: number
  usage: Usage
  /**
   * What the turn's model calls cost in US dollars, sub-agents included; `null` when a call's
   * price was unknown (see docs/cost.md).
   */
  costUsd: number | null
  /** What the session's turns cost in this process, this one included; `null` when a price was unknown. */
  sessionCostUsd: number | null
  /** What went wrong, for `error` (and the denial, for `denied`). */
  error: string | null
  /** A stable name of the error's kind: `provider.timeout`, `tool.fatal`, `store`, ... */
  errorKind: string | null
  /** The original error a JS tool threw as fatal (`FatalToolError` or any error with `fatal: true`). */
  cause?: unknown
  /** The approval the turn is parked on, for `awaiting_approval`. */
  approval?: PendingApproval
  /**
   * What sub-agents (`agentTool`) spent in the turn, per tool (already counted in `usage`).
   * Absent when no sub-agent ran.
   */
  subAgents?: SubAgentUsage[]
}

/** What the sub-agent behind one tool (`agentTool`) spent in a turn. */
export interface SubAgentUsage {
  /** The tool's name. */
  tool: string
  /** Its calls in the turn. */
  calls: number
  /** The sub-agent's model calls over those calls. */
  iterations: number
  /** The tokens those model calls used. */
  usage: Usage
  /** What those calls cost in US dollars, as priced by the sub-agent; absent when a price was unknown. */
  costUsd?: number
}

interface EventBase<T extends string> {
  type: T
  /** The session the event belongs to. */
  sessionId: string
}

/** The turn started. */
export interface RunStartedEvent extends EventBase<'run_started'> {
  runId: string
  /** Who started the turn: the person, or another tab's agent. */
  origin: TurnOrigin
}
/** A model call is being made (one per iteration). */
export interface ModelCallStartedEvent extends EventBase<'model_call_started'> { iteration: number }
/** A router reported which route served the call. */
export interface ModelRoutedEvent extends EventBase<'model_routed'> { provider: string; model: string }
/** A piece of answer text. */
export interface ContentTokenEvent extends EventBase<'content_token'> { text: string }
/** A piece of reasoning text. */
export interface ReasoningTokenEvent extends EventBase<'reasoning_token'> { text: string }
/** A model call finished. */
export interface ModelCallCompletedEvent extends EventBase<'model_call_completed'> {
  iteration: number
  usage: Usage | null
  /** What the call cost in US dollars; `null` when the model's price is unknown (docs/cost.md). */
  costUsd: number | null
}
/** A piece of a tool call's arguments (JSON text) as the model streams them; only with `streamToolArguments`. */
export interface ToolCallArgumentsDeltaEvent extends EventBase<'tool_call_arguments_delta'> {
  callId: string
  name: string
  delta: string
}
/** A tool started running. */
export interface ToolCallStartedEvent extends EventBase<'tool_call_started'> {
  callId: string
  name: string
  arguments: Json
}
/** A tool finished with a result. */
export interface ToolCallSucceededEvent extends EventBase<'tool_call_succeeded'> {
  callId: string
  name: string
  /** The result as the model sees it (after the cap). */
  output: string
  truncated: boolean
  durationMs: number
}
/** A tool call failed or never ran (invalid arguments, unknown tool, timeout). */
export interface ToolCallFailedEvent extends EventBase<'tool_call_failed'> {
  callId: string
  name: string
  error: string
  /** Whether the failure ends the turn. */
  fatal: boolean
}
/** The gate denied a call (or no gate was configured). */
export interface ToolCallDeniedEvent extends EventBase<'tool_call_denied'> {
  callId: string
  name: string
  reason: string
}
/** Compaction of older turns started. */
export interface CompactionRunningEvent extends EventBase<'compaction_running'> {
  estimatedTokens: number
  budgetTokens: number
}
/** Compaction finished. */
export interface CompactionCompletedEvent extends EventBase<'compaction_completed'> {
  estimatedTokens: number
  method: string
}
/** The model asked the person a question; the turn is parked until it is answered. */
export interface ClarificationPendingEvent extends EventBase<'clarification_pending'> {
  clarificationId: string
  question: Json
}
/** The person answered. */
export interface ClarificationRespondedEvent extends EventBase<'clarification_responded'> {
  clarificationId: string
  answer: string
}
/** The question expired unanswered. */
export interface ClarificationExpiredEvent extends EventBase<'clarification_expired'> { clarificationId: string }
/** The question was dismissed. */
export interface ClarificationDismissedEvent extends EventBase<'clarification_dismissed'> {
  clarificationId: string
  reason: string
}
/** A gated call waits for the person's approval; the turn is parked until it is answered. */
export interface ApprovalPendingEvent extends EventBase<'approval_pending'> {
  approvalId: string
  approval: PendingApproval
}
/** One call's decision as `approval_resolved` reports it. */
export type ResolvedDecision =
  | { decision: 'approve'; arguments?: Json; remember?: RememberScope }
  | { decision: 'reject'; reason?: string; remember?: RememberScope }
/**
 * The approval was answered (`answered`, with the decisions by call id) or dismissed
 * (`dismissed`: a new message, the run cancelled, `dismissApproval`; `decisions` is then
 * `{ reason }`).
 */
export type ApprovalResolvedEvent =
  | (EventBase<'approval_resolved'> & { approvalId: string; resolution: 'answered'; decisions: { [callId: string]: ResolvedDecision } })
  | (EventBase<'approval_resolved'> & { approvalId: string; resolution: 'dismissed'; decisions: { reason: string } })
/** The approval expired unanswered (`approvalTtlMs`); its calls did not run. */
export interface ApprovalExpiredEvent extends EventBase<'approval_expired'> { approvalId: string }
/** A message for a busy tab was queued. */
export interface MessageQueuedEvent extends EventBase<'message_queued'> { queueLen: number; origin: string }
/** The turn ended normally (`done`, `denied`, `awaiting_user` or `awaiting_approval`). */
export interface RunCompletedEvent extends EventBase<'run_completed'> { outcome: Outcome }
/** The turn ended with an error. */
export interface RunFailedEvent extends EventBase<'run_failed'> { outcome: Outcome }
/** The turn was cancelled. */
export interface RunCancelledEvent extends EventBase<'run_cancelled'> { outcome: Outcome }
/** The turn hit the iteration or tool-call cap. */
export interface RunCappedEvent extends EventBase<'run_capped'> { outcome: Outcome }

/** One event of a run: narrow it with `switch (event.type)`. */
export type AgentEvent =
  | RunStartedEvent
  | ModelCallStartedEvent
  | ModelRoutedEvent
  | ContentTokenEvent
  | ReasoningTokenEvent
  | ModelCallCompletedEvent
  | ToolCallArgumentsDeltaEvent
  | ToolCallStartedEvent
  | ToolCallSucceededEvent
  | ToolCallFailedEvent
  | ToolCallDeniedEvent
  | CompactionRunningEvent
  | CompactionCompletedEvent
  | ClarificationPendingEvent
  | ClarificationRespondedEvent
  | ClarificationExpiredEvent
  | ClarificationDismissedEvent
  | ApprovalPendingEvent
  | ApprovalResolvedEvent
  | ApprovalExpiredEvent
  | MessageQueuedEvent
  | RunCompletedEvent
  | RunFailedEvent
  | RunCancelledEvent
  | RunCappedEvent

/** The `type` of every event. */
export type AgentEventType = AgentEvent['type']
/** The final event of a run. */
export type FinalEvent = RunCompletedEvent | RunFailedEvent | RunCancelledEvent | RunCappedEvent

/** A text or image part of a message. */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; source: { kind: 'base64'; data: string } | { kind: 'url'; url: string } }

/** A conversation message, as stored. */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: ContentPart[]
  toolCalls?: { id: string; name: string; arguments: string; signature?: string }[]
  toolCallId?: string
  toolName?: string
  isError?: boolean
  [key: string]: unknown
}

/** A stored message with its sequence number. */
export interface StoredMessage {
  seq: number
  message: Message
  createdAtMs: number
}
