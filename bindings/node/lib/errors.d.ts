/** Error classes: every error the package throws is an `AgentCoreError` with a stable `code`. */
import type { Outcome } from './events.js'

/** Codes of the errors agent-core throws. */
export type ErrorCode =
  | 'config'
  | 'invalid_argument'
  | 'invalid_state'
  | 'runtime'
  | 'tool_duplicate'
  | 'tool_invalid_schema'
  | 'tool_invalid'
  | 'session_not_found'
  | 'session_exists'
  | 'store'
  | 'closed'
  | 'cancelled'
  | 'mcp'
  | 'tab_not_found'
  | 'tab_closed'
  | 'tab_exists'
  | 'tab_queue_full'
  | 'clarification_not_pending'
  | 'clarification_invalid_answer'
  | 'clarification_expired'
  | 'approval_not_pending'
  | 'approval_expired'
  | 'approval_missing_decision'
  | 'approval_unknown_call'
  | 'approval_invalid_arguments'
  | 'approval_invalid_remember'
  | (string & {})

/** Base class of every error thrown by agent-core. */
export declare class AgentCoreError extends Error {
  constructor(message: string, code: string, options?: ErrorOptions)
  readonly code: ErrorCode
}
/** A bad option or argument. */
export declare class ConfigError extends AgentCoreError {}
/** A tool could not be defined or registered. */
export declare class ToolDefinitionError extends AgentCoreError {}
/** The session does not exist. */
export declare class SessionNotFoundError extends AgentCoreError {}
/** A session with this id already exists. */
export declare class SessionExistsError extends AgentCoreError {}
/** The store failed. */
export declare class StoreError extends AgentCoreError {}
/** The agent was closed. */
export declare class ClosedError extends AgentCoreError {}
/** A clarification answer was refused (not pending, invalid, expired). */
export declare class ClarificationError extends AgentCoreError {}
/**
 * An answer to a pending approval was refused: `approval_not_pending`, `approval_expired`, or,
 * with the approval still pending, `approval_missing_decision`, `approval_unknown_call`,
 * `approval_invalid_arguments` (edited arguments do not fit the tool's schema) or
 * `approval_invalid_remember` (a `{ host }` pattern that is not valid or does not match the
 * call's host).
 */
export declare class ApprovalError extends AgentCoreError {}
/** A turn that did not end `done` (from `run.result()`); `code` is the error kind or status. */
export declare class RunError extends AgentCoreError {
  constructor(message: string, code: string, outcome: Outcome, options?: ErrorOptions)
  readonly outcome: Outcome
}
/** Thrown by a tool: the model sees the message and may retry. */
export declare class ToolError extends AgentCoreError {
  constructor(message: string, options?: { retryable?: boolean; cause?: unknown })
  readonly retryable: boolean
}
/** Thrown by a JS BrowserHost; `disconnected` ends the turn, `timeout` lets the model retry. */
export declare class HostError extends AgentCoreError {
  constructor(
    message: string,
    code?: 'disconnected' | 'timeout' | 'script' | 'navigation' | 'no_such_tab' | 'other',
    options?: ErrorOptions,
  )
}
/** The tab already holds `maxHeldMessages` messages from agents; this one was not queued (`tab_queue_full`). */
export declare class TabQueueFullError extends AgentCoreError {}
/** Thrown by a tool: ends the turn; the thrown object comes back as `outcome.cause`. */
export declare class FatalToolError extends AgentCoreError {
  constructor(message: string, options?: { cause?: unknown })
  readonly fatal: true
}
