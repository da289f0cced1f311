'use strict'
/**
 * The agent: a provider, tools, an optional store and gate, and the loop's limits.
 * @module agent-core/agent
 */
const native = require('../index.js')
const { wrap, ConfigError, ClosedError, requireString } = require('./errors.js')
const { addToolsAndGate } = require('./gate.js')
const { addHooks } = require('./hooks.js')
const { Session, typedSchema } = require('./session.js')
const { ToolSet, toJsonValue } = require('./tools.js')

/** Each agent's native handle, for `agentTool` (kept off the class's public shape). */
const NATIVE = new WeakMap()

/** Fatal tool errors kept for their outcome, at most this many per agent. */
const MAX_KEPT_ERRORS = 1024

/** An LLM agent: a provider, tools, an optional store and gate, and the loop's limits. */
class Agent {
  #native
  #controllers = new Map()
  /** @type {Map<number, unknown>} */
  #errors = new Map()
  #nextErrorId = 1

  /** @param {any} options */
  constructor(options) {
    if (options === null || typeof options !== 'object') {
      throw new ConfigError('new Agent(options): options must be an object', 'invalid_argument')
    }
    const { provider, tools = [], gate, store, systemPrompt, config, onEvent, clarification, hooks } = options
    if (!provider || !provider.native) {
      throw new ConfigError('new Agent(options): `provider` is required (for example a ScriptedProvider)', 'config')
    }
    const b = new native.NativeAgentBuilder()
    wrap(() => b.provider(provider.native))
    if (store) wrap(() => b.store(store.native))
    // null is no prompt, as None is in Python; anything else but text is a mistake, not "null" or "42".
    if (systemPrompt != null) b.systemPrompt(requireString(systemPrompt, 'new Agent(options)', 'systemPrompt'))
    if (clarification) wrap(() => b.clarification(true))
    if (config) wrap(() => b.config(config))
    addToolsAndGate(b, tools, gate, this.#controllers, this.#errors, () => {
      const id = this.#nextErrorId++
      if (this.#errors.size >= MAX_KEPT_ERRORS) {
        const oldest = this.#errors.keys().next().value
        if (oldest !== undefined) this.#errors.delete(oldest)
      }
      return id
    })
    if (hooks != null) addHooks(b, hooks, (o) => this._outcome(o))
    if (onEvent !== undefined) {
      if (typeof onEvent !== 'function') throw new ConfigError('`onEvent` must be a function', 'invalid_argument')
      b.onEvent((batch) => {
        if (batch.dropped > 0) {
          process.emitWarning(
            `agent-core: the onEvent callback fell behind; ${batch.dropped} events were dropped ` +
              '(streamed tokens first). Return from it sooner, or raise `eventBuffer`.',
          )
        }
        for (const event of batch.events) {
          try {
            onEvent(this._event(event))
          } catch (e) {
            // An observer that throws must not take the process down; report it like Node does.
            process.emitWarning(`agent-core: onEvent threw: ${e instanceof Error ? e.message : String(e)}`)
          }
        }
      })
    }
    this.#native = wrap(() => b.build())
    NATIVE.set(this, this.#native)
    /** @internal */
    this._builder = b
    /** @internal */
    this._store = store
  }

  /**
   * Creates a session.
   * @param {{ id?: string }} [options]
   */
  async createSession(options = {}) {
    const s = await wrap(() => this.#native.createSession(options.id))
    return new Session(s, this)
  }

  /**
   * Opens an existing session: one this agent has open, or one in its store.
   * @param {string} id
   */
  async openSession(id) {
    const s = await wrap(() => this.#native.openSession(id))
    return new Session(s, this)
  }

  /**
   * The remembered approval decisions (`remember: 'session' | 'always'` in
   * `session.resolveApproval`), oldest first: in the store when the agent has one (shared by
   * every agent on it, kept across restarts), in memory otherwise.
   */
  async approvalRules() {
    return wrap(() => this.#native.approvalRules())
  }

  /**
   * Forgets remembered decision `id`: the gate's questions about that tool go to the person
   * again. Resolves to whether there was such a rule.
   * @param {string} id
   */
  async revokeApprovalRule(id) {
    // Passing the rule itself instead of its id would otherwise answer "no such rule".
    const ruleId = requireString(id, 'revokeApprovalRule', 'id')
    return wrap(() => this.#native.revokeApprovalRule(ruleId))
  }

  /** The names of the agent's tools. */
  get toolNames() {
    return this.#native.toolNames()
  }

  /**
   * Whether the model is sent images: `config.vision`, with `'auto'` resolved by what the
   * provider knows of its model. When false, image tools (page_screenshot) are not offered.
   */
  get takesImages() {
    return this.#native.takesImages
  }

  /** Whether `close()` was called. */
  get closed() {
    return this.#native.closed
  }

  /** Cancels running turns and refuses new ones. Callbacks never keep the process alive. */
  close() {
    this.#native.close()
    for (const c of this.#controllers.values()) c.abort(new ClosedError('the agent was closed', 'closed'))
    this.#controllers.clear()
  }

  /** @internal @param {any} o */
  _outcome(o) {
    if (o && o.errorId !== undefined) {
      const cause = this.#errors.get(o.errorId)
      delete o.errorId
      if (cause !== undefined) o.cause = cause
    }
    return o
  }

  /** @internal @param {any} ev */
  _event(ev) {
    if (ev.outcome) this._outcome(ev.outcome)
    return ev
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(Agent.prototype, Symbol.dispose, {
    value: function dispose() {
      this.close()
    },
  })
}

/**
 * Offers `agent` to another agent as the tool `name`, taking `{ task }`: each call runs one
 * turn of `agent` in a new session and answers with its final text (a cap, a denial, a question
 * or a failure each say so). It acts for whoever started the calling turn (its gate sees that
 * origin), stops when that turn is cancelled, and nests at most `maxDepth` levels below the
 * first agent (default 3): a deeper call is refused with a message the model reads. What it
 * spent is in the calling turn's `usage` and, per tool, in `outcome.subAgents`.
 * @param {string} name
 * @param {string} description
 * @param {Agent} agent
 * @param {import('./agent').AgentToolOptions} [options]
 */
function agentTool(name, description, agent, options) {
  const handle = NATIVE.get(/** @type {any} */ (agent))
  if (handle === undefined) {
    throw new ConfigError('agentTool(name, description, agent): `agent` must be an Agent', 'invalid_argument')
  }
  if (typeof name !== 'string' || typeof description !== 'string') {
    throw new ConfigError('agentTool(name, description, agent): `name` and `description` must be strings', 'invalid_argument')
  }
  const { maxDepth, output, ...rest } = options ?? {}
  const unknown = Object.keys(rest)
  if (unknown.length > 0) {
    throw new ConfigError(`agentTool: unknown option \`${unknown[0]}\` (expected maxDepth, output)`, 'invalid_argument')
  }
  if (maxDepth !== undefined && maxDepth !== null && (!Number.isInteger(maxDepth) || maxDepth < 0 || maxDepth > 0xffffffff)) {
    throw new ConfigError('agentTool: `maxDepth` must be a non-negative integer', 'invalid_argument')
  }
  const typed = output === undefined || output === null ? undefined : typedSchema(output, undefined)
  return new ToolSet(
    wrap(() =>
      native.agentTool(name, description, handle, maxDepth ?? undefined, typed?.name, typed ? toJsonValue(typed.json) : undefined),
    ),
  )
}

module.exports = { Agent, agentTool }
