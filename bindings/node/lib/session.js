'use strict'
/**
 * Sessions: conversations whose turns run one after another.
 * @module agent-core/session
 */
const { wrap, requireString } = require('./errors.js')
const { toJsonValue } = require('./tools.js')
const { Run, cancelOnAbort } = require('./run.js')
const { approvalDecisions } = require('./approvals.js')

/**
 * The JSON Schema of `schema`: the result of its `toJSONSchema()` method, its `jsonSchema`
 * property, or the object itself.
 * @param {any} schema
 * @returns {Record<string, unknown>}
 */
function jsonSchemaOf(schema) {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new TypeError(
      "a typed answer's schema is a JSON Schema object, or an object with toJSONSchema() or a jsonSchema property"
    )
  }
  let json = schema
  if (typeof schema.toJSONSchema === 'function') json = schema.toJSONSchema()
  else if (schema.jsonSchema !== null && typeof schema.jsonSchema === 'object') json = schema.jsonSchema
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new TypeError("the JSON Schema of a typed answer must be an object")
  }
  return json
}

/**
 * The JSON Schema of a typed answer and its name for the model: `name`, else the schema's
 * `title`, else `answer`.
 * @param {any} schema
 * @param {string | undefined} name
 */
function typedSchema(schema, name) {
  const json = jsonSchemaOf(schema)
  return { json, name: String(name ?? (typeof json.title === 'string' ? json.title : 'answer')) }
}

/** A conversation with the agent. Turns of one session run one after another. */
class Session {
  #native
  #agent
  /** @type {string | undefined} */
  #id

  /** @internal */
  constructor(/** @type {any} */ nativeSession, /** @type {Agent} */ agent) {
    this.#native = nativeSession
    this.#agent = agent
  }

  /** The session's id (a UUID), read from the native session when first asked for (see `Run`). */
  get id() {
    return (this.#id ??= this.#native.id)
  }

  /** What `JSON.stringify` writes of the session: its id. */
  toJSON() {
    return { id: this.id }
  }

  /**
   * Starts a turn. Returns at once; the turn runs in the background.
   * @param {string | { role?: 'user', content: any[] }} input text, or a whole user message
   * @param {{ signal?: AbortSignal }} [options] `signal` cancels the turn (an aborted one at once)
   */
  send(input, options = {}) {
    const signal = options.signal
    const aborted = signal ? signal.aborted : false
    const n =
      typeof input === 'string'
        ? wrap(() => this.#native.send(input, aborted))
        : wrap(() => this.#native.sendMessage(toJsonValue({ role: 'user', ...input }), aborted))
    const run = new Run(n, this.#agent)
    // An already aborted signal went to the native send: the run starts cancelled.
    if (!aborted) cancelOnAbort(signal, n, run)
    return run
  }

  /**
   * Starts a typed turn: its final answer must match `schema`, and `outcome.structured` holds
   * it (parsed and checked, with one correction; a second bad answer ends the turn `error` with
   * `errorKind` `output.invalid`, a schema that is not valid JSON Schema `output.schema`).
   * @param {string | { role?: 'user', content: any[] }} input text, or a whole user message
   * @param {any} schema a JSON Schema object, an object with a `toJSONSchema()` method, or one
   *   with a `jsonSchema` property
   * @param {{ signal?: AbortSignal, name?: string, strict?: boolean }} [options] `name` names the
   *   schema for the model (default: its `title`, else `answer`); `strict` asks for the
   *   provider's strict schema mode where it has one (OpenAI's, which needs every property
   *   required and `additionalProperties: false`)
   */
  sendTyped(input, schema, options = {}) {
    const { json, name } = typedSchema(schema, options.name)
    const signal = options.signal
    const aborted = signal ? signal.aborted : false
    const message = typeof input === 'string' ? input : toJsonValue({ role: 'user', ...input })
    const strict = options.strict === true
    const n = wrap(() => this.#native.sendWithSchema(message, name, toJsonValue(json), aborted, strict))
    const run = new Run(n, this.#agent, true)
    if (!aborted) cancelOnAbort(signal, n, run)
    return run
  }

  /** The question a turn of this session is parked on (`awaiting_user`), or `null`. */
  pendingClarification() {
    return this.#native.pendingClarification() ?? null
  }

  /**
   * Answers the pending question; the parked turn goes on in a new run. An answer that does
   * not fit the question is refused with a `ClarificationError` and the question stays pending.
   * @param {string} clarificationId
   * @param {string} answer
   * @param {{ signal?: AbortSignal }} [options]
   */
  answerClarification(clarificationId, answer, options = {}) {
    // The person's words go to the model: a missing answer must not arrive as "undefined".
    const text = requireString(answer, 'answerClarification', 'answer')
    const n = wrap(() => this.#native.answerClarification(clarificationId, text))
    const run = new Run(n, this.#agent)
    cancelOnAbort(options.signal, n, run)
    return run
  }

  /**
   * Dismisses the pending question without answering it (the person closed it): no turn
   * starts, the parked `ask_clarification` call gets a "dismissed" result that the model reads
   * with the next message, and `clarification_dismissed` goes to `onEvent`. Waits for a running
   * turn of the session to end first. A question that is no longer pending is refused with a
   * `ClarificationError` (`clarification_not_pending`).
   * @param {string} clarificationId
   */
  dismissClarification(clarificationId) {
    return wrap(() => this.#native.dismissClarification(clarificationId))
  }

  /**
   * The approval a turn of this session is parked on (`awaiting_approval`: its gate answered
   * `'ask'`), or `null`. Persisted: a session reopened from the store after a restart has it.
   */
  pendingApproval() {
    return this.#native.pendingApproval() ?? null
  }

  /**
   * Answers the pending approval, one decision per call (keyed by call id), and continues the
   * parked turn in a new run: approved calls run (with edited `arguments` when given), rejected
   * ones do not and the model reads why. Refused with an `ApprovalError`, the approval still
   * pending, when a call has no decision (`approval_missing_decision`), a decision names another
   * call (`approval_unknown_call`) or edited arguments do not fit the tool's schema
   * (`approval_invalid_arguments`); `approval_not_pending` / `approval_expired` once it is gone.
   * @param {string} approvalId
   * @param {import('./approvals').ApprovalDecisions} decisions
   * @param {{ signal?: AbortSignal }} [options]
   */
  resolveApproval(approvalId, decisions, options = {}) {
    const normalized = approvalDecisions('resolveApproval', decisions)
    const n = wrap(() => this.#native.resolveApproval(approvalId, normalized))
    const run = new Run(n, this.#agent)
    cancelOnAbort(options.signal, n, run)
    return run
  }

  /**
   * Dismisses the pending approval without answering it: its calls do not run (the model reads
   * that with the next message), no turn starts, and `approval_resolved` (`dismissed`) goes to
   * `onEvent`. An approval that is no longer pending is refused with an `ApprovalError`
   * (`approval_not_pending`).
   * @param {string} approvalId
   */
  dismissApproval(approvalId) {
    return wrap(() => this.#native.dismissApproval(approvalId))
  }

  /** Every stored message of the session, with sequence numbers. */
  async messages() {
    return wrap(() => this.#native.messages())
  }

  /** The messages the model would see on the next turn. */
  async modelHistory() {
    return wrap(() => this.#native.modelHistory())
  }

  /**
   * What the session's finished turns cost in US dollars in this process (sub-agents
   * included); null when a call's price was unknown. See docs/cost.md.
   * @returns {number | null}
   */
  costUsd() {
    return this.#native.costUsd() ?? null
  }
}

module.exports = { Session, typedSchema }
