'use strict'
/**
 * Error classes. Every error the package throws is an `AgentCoreError` with a stable `code`.
 * @module agent-core/errors
 */

/** Base class of every error thrown by agent-core; `code` is stable, the message is for people. */
class AgentCoreError extends Error {
  /**
   * @param {string} message
   * @param {string} code
   * @param {ErrorOptions} [options]
   */
  constructor(message, code, options) {
    super(message, options)
    this.name = new.target.name
    /** @type {string} */
    this.code = code
  }
}

/** A bad option or argument (`config`, `invalid_argument`, `invalid_state`, `runtime`). */
class ConfigError extends AgentCoreError {}
/** A tool could not be registered (`tool_duplicate`, `tool_invalid_schema`, `tool_invalid`). */
class ToolDefinitionError extends AgentCoreError {}
/** The session does not exist (`session_not_found`). */
class SessionNotFoundError extends AgentCoreError {}
/** A session with this id already exists (`session_exists`). */
class SessionExistsError extends AgentCoreError {}
/** The store failed (`store`). */
class StoreError extends AgentCoreError {}
/** The agent was closed (`closed`). */
class ClosedError extends AgentCoreError {}
/**
 * A clarification answer was refused: `clarification_not_pending`,
 * `clarification_invalid_answer` (the question stays pending) or `clarification_expired`.
 */
class ClarificationError extends AgentCoreError {}
/**
 * An answer to a pending approval was refused: `approval_not_pending` (answered, dismissed or
 * expired already), `approval_expired`, or, with the approval still pending,
 * `approval_missing_decision` (a call has no decision), `approval_unknown_call` (a decision
 * names a call the approval does not hold), `approval_invalid_arguments` (edited arguments
 * do not fit the tool's schema) or `approval_invalid_remember` (a `{ host }` pattern to
 * remember is not valid, or does not match the call's host).
 */
class ApprovalError extends AgentCoreError {}

/**
 * A turn that did not end `done`, thrown by `run.result()`. `code` is the outcome's
 * `errorKind` (`provider.timeout`, `tool.fatal`, ...) or its status (`denied`, `capped`,
 * `cancelled`); `outcome` is the whole outcome.
 */
class RunError extends AgentCoreError {
  /**
   * @param {string} message
   * @param {string} code
   * @param {any} outcome
   * @param {ErrorOptions} [options]
   */
  constructor(message, code, outcome, options) {
    super(message, code, options)
    this.outcome = outcome
  }
}

/**
 * Thrown by a tool to tell the model something went wrong; the loop goes on. Any other thrown
 * error does the same; this class adds `retryable`.
 */
class ToolError extends AgentCoreError {
  /**
   * @param {string} message
   * @param {{ retryable?: boolean, cause?: unknown }} [options]
   */
  constructor(message, options = {}) {
    super(message, 'tool_error', options.cause === undefined ? undefined : { cause: options.cause })
    this.retryable = Boolean(options.retryable)
  }
}

/**
 * Thrown by a tool to end the turn with status `error` (kind `tool.fatal`). The thrown object
 * comes back as `outcome.cause`, and `run.result()` rethrows it.
 */
class FatalToolError extends AgentCoreError {
  /**
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, options = {}) {
    super(message, 'tool_fatal', options.cause === undefined ? undefined : { cause: options.cause })
    this.fatal = true
  }
}

/**
 * Thrown by a JS BrowserHost. `code` is `disconnected` (ends the turn), `timeout` (the model
 * may retry), `script`, `navigation`, `no_such_tab` or `other` (the model sees the message).
 */
class HostError extends AgentCoreError {
  /**
   * @param {string} message
   * @param {'disconnected' | 'timeout' | 'script' | 'navigation' | 'no_such_tab' | 'other'} [code]
   * @param {ErrorOptions} [options]
   */
  constructor(message, code = 'other', options) {
    super(message, code, options)
  }
}

/**
 * A tab already holds the most messages from other tabs' agents it may (`maxHeldMessages` of
 * `TabHub.create`, default 32): this one was not queued (`tab_queue_full`).
 */
class TabQueueFullError extends AgentCoreError {}

const BY_CODE = {
  config: ConfigError,
  invalid_argument: ConfigError,
  invalid_state: ConfigError,
  runtime: ConfigError,
  tool_duplicate: ToolDefinitionError,
  tool_invalid_schema: ToolDefinitionError,
  tool_invalid: ToolDefinitionError,
  session_not_found: SessionNotFoundError,
  session_exists: SessionExistsError,
  store: StoreError,
  encryption_unavailable: StoreError,
  crypt: StoreError,
  closed: ClosedError,
  clarification_not_pending: ClarificationError,
  clarification_invalid_answer: ClarificationError,
  clarification_expired: ClarificationError,
  approval_not_pending: ApprovalError,
  approval_expired: ApprovalError,
  approval_missing_decision: ApprovalError,
  approval_unknown_call: ApprovalError,
  approval_invalid_arguments: ApprovalError,
  approval_invalid_remember: ApprovalError,
  tab_queue_full: TabQueueFullError,
}

const CODED = /^\[([a-z_.]+)\] ([\s\S]*)$/

/**
 * Turns an error thrown by the native module into its `AgentCoreError` subclass.
 * @param {unknown} error
 * @returns {unknown}
 */
function translate(error) {
  if (error instanceof AgentCoreError || !(error instanceof Error)) return error
  const m = CODED.exec(error.message)
  if (!m) return error
  const Class = BY_CODE[m[1]] ?? AgentCoreError
  return new Class(m[2], m[1])
}

/**
 * Runs `f`, translating native errors (sync or async).
 * @template T
 * @param {() => T} f
 * @returns {T}
 */
function wrap(f) {
  let value
  try {
    value = f()
  } catch (e) {
    throw translate(e)
  }
  if (value && typeof (/** @type {any} */ (value).then) === 'function') {
    return /** @type {any} */ (value).then(undefined, (/** @type {unknown} */ e) => {
      throw translate(e)
    })
  }
  return value
}

/**
 * `value` when it is a string; otherwise a `ConfigError` saying so. For the text that reaches
 * the model or names a file: `String()` would turn a missing value into "undefined".
 * @param {unknown} value
 * @param {string} where the method, as the message names it
 * @param {string} name the argument or option
 * @param {string} [expected] what the message says it must be
 * @returns {string}
 */
function requireString(value, where, name, expected = 'a string') {
  if (typeof value === 'string') return value
  const got = value === null ? 'null' : value instanceof URL ? `a ${value.protocol} URL` : typeof value
  throw new ConfigError(`${where}: \`${name}\` must be ${expected}, not ${got}`, 'invalid_argument')
}

module.exports = {
  AgentCoreError,
  ConfigError,
  ToolDefinitionError,
  SessionNotFoundError,
  SessionExistsError,
  StoreError,
  ClosedError,
  ClarificationError,
  ApprovalError,
  RunError,
  ToolError,
  FatalToolError,
  HostError,
  TabQueueFullError,
  translate,
  wrap,
  requireString,
}
