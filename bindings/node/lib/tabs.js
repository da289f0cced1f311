'use strict'
/**
 * One agent session per browser tab: the tab hub.
 * @module agent-core/tabs
 */
const { wrap, AgentCoreError, requireString } = require('./errors.js')
const { Agent } = require('./agent.js')
const { Session, typedSchema } = require('./session.js')
const { Run, cancelOnAbort } = require('./run.js')
const { iterate } = require('./events.js')
const { approvalDecisions } = require('./approvals.js')
const { toJsonValue } = require('./tools.js')
const { tabWiring } = require('./tab_wiring.js')

/**
 * One agent session per browser tab, with short git-style handles, `send_to_tab` /
 * `read_tab` tools (off unless permitted), queueing for busy tabs and an auto-wake budget.
 */
class TabHub {
  #native
  #agent

  /** @internal */
  constructor(/** @type {any} */ n, /** @type {Agent} */ agent) {
    this.#native = n
    this.#agent = agent
  }

  /**
   * Builds a hub whose tabs' agents are made from `options` (the `Agent` options, plus
   * `autoWakeBudget`, `maxHeldMessages` (default 32: past it an agent's message is refused with
   * `TabQueueFullError`), `sendToTab` / `readTab`, the default permissions of new tabs,
   * `pageTools: host` (or `{ host, ...page tool options }`), which gives every tab's agent page
   * tools bound to the browser tab its hub tab is wired to, and `openedTabPolicy`, who gets a
   * browser tab an agent opens).
   * @param {any} options
   */
  static async create(options) {
    const { autoWakeBudget, maxHeldMessages, sendToTab, readTab, pageTools, openedTabPolicy, ...agentOptions } =
      options ?? {}
    const wiring = tabWiring(pageTools, openedTabPolicy, agentOptions.tools)
    const agent = new Agent(agentOptions)
    const store = agent._store
    const n = await wrap(() =>
      agent._builder.tabHub(store ? store.native : undefined, autoWakeBudget, sendToTab, readTab, maxHeldMessages, wiring),
    )
    return new TabHub(n, agent)
  }

  /**
   * Opens a tab; returns its id. Permissions default to the hub's.
   * @param {{ sendToTab?: boolean, readTab?: boolean }} [permissions]
   */
  openTab(permissions = {}) {
    return wrap(() => this.#native.openTab(permissions.sendToTab, permissions.readTab))
  }
  /**
   * Opens a tab wired to the host's browser tab `hostTab` (its id as the host's `tabs()`
   * reports it): the tab's page tools act there. Returns the hub tab's id.
   * @param {string} hostTab
   */
  openTabForHost(hostTab) {
    return wrap(() => this.#native.openTabForHost(hostTab))
  }
  /**
   * Wires the browser tab `hostTab` to `tab` (taking it from another hub tab) and makes it the
   * one `tab`'s agent works in, from its page tools' next call.
   * @param {string} tab
   * @param {string} hostTab
   */
  wireHostTab(tab, hostTab) {
    return wrap(() => this.#native.wireHostTab(tab, hostTab))
  }
  /**
   * Tells the hub that a browser tab closed; returns the hub tab it belonged to, or null. That
   * tab's page tools then fail with an error that tells its model what to do; the hub tab
   * stays open until `closeTab`.
   * @param {string} hostTab
   */
  hostTabClosed(hostTab) {
    return this.#native.hostTabClosed(hostTab) ?? null
  }
  /**
   * The browser tab `tab`'s agent works in: `{ state: 'unwired' }`, `{ state: 'open', hostTab }`
   * or `{ state: 'closed', hostTab }`.
   * @param {string} tab
   */
  hostTab(tab) {
    return wrap(() => this.#native.hostTab(tab))
  }
  /** Every open browser tab that belongs to `tab`, oldest first. @param {string} tab */
  hostTabs(tab) {
    return wrap(() => this.#native.hostTabs(tab))
  }
  /** The hub tab a browser tab belongs to, or null. @param {string} hostTab */
  tabForHost(hostTab) {
    return this.#native.tabForHost(hostTab) ?? null
  }
  /**
   * Hands a browser tab that `opener`'s agent opened outside tab_open (a popup, say) to its
   * owner, as `openedTabPolicy` decides; returns the hub tab that got it.
   * @param {string} opener the hub tab whose agent opened it
   * @param {string} hostTab the host's id for the new browser tab
   * @param {string} [url] its address when it opened
   */
  adoptHostTab(opener, hostTab, url = '') {
    return wrap(() => this.#native.adoptHostTab(opener, hostTab, url))
  }
  /** @param {string} tab */
  closeTab(tab) {
    return wrap(() => this.#native.closeTab(tab))
  }
  /** @param {string} tab */
  reopenTab(tab) {
    return wrap(() => this.#native.reopenTab(tab))
  }
  /**
   * Delivers a message: an idle tab starts a turn (`started`, with `run`), a busy one queues it
   * (`queued`), and agent messages past the auto-wake budget wait (`held`).
   *
   * `signal` cancels the turn this delivery started. An already-aborted signal delivers
   * nothing: the promise rejects with an `AgentCoreError` (code `cancelled`) and no turn starts.
   * A queued or held message is not affected by the signal (take it out with the tab's queue).
   *
   * With `schema` (what `session.sendTyped` takes) the turn that reads the message is a typed
   * turn of its own: never merged with other queued messages, still typed when the tab is
   * restored from its store; its `outcome.structured` holds the answer.
   * @param {string} tab
   * @param {string} text
   * @param {{ origin?: 'human' | 'agent', signal?: AbortSignal, schema?: any, name?: string, strict?: boolean }} [options]
   */
  async deliver(tab, text, options = {}) {
    const signal = options.signal
    const refuse = () =>
      new AgentCoreError('the signal was aborted: nothing was delivered', 'cancelled', { cause: signal?.reason })
    const typed = options.schema === undefined ? null : typedSchema(options.schema, options.name)
    if (signal && signal.aborted) throw refuse()
    const d = await wrap(() =>
      typed
        ? this.#native.deliver(tab, text, options.origin, typed.name, toJsonValue(typed.json), options.strict === true)
        : this.#native.deliver(tab, text, options.origin)
    )
    const n = d.run()
    const run = n ? new Run(n, this.#agent, typed !== null) : null
    if (run) cancelOnAbort(signal, n, run)
    return {
      status: d.status,
      queueLen: d.queueLen,
      autoWakeBudget: d.autoWakeBudget,
      awaitingUser: d.awaitingUser,
      run,
    }
  }
  /** Resolves a handle or id prefix: `{ status: 'ok', tab, handle }`, `none` or `ambiguous`. @param {string} input */
  resolve(input) {
    return this.#native.resolve(input)
  }
  /** A tab's short handle. @param {string} tab */
  handle(tab) {
    return wrap(() => this.#native.handle(tab)) ?? null
  }
  /** Every tab, open and closed. */
  tabs() {
    return this.#native.tabs()
  }
  /** One tab, or null. @param {string} tab */
  tab(tab) {
    return wrap(() => this.#native.tab(tab))
  }
  /** @param {string} tab @param {{ sendToTab?: boolean, readTab?: boolean }} permissions */
  setPermissions(tab, permissions) {
    return wrap(() => this.#native.setPermissions(tab, Boolean(permissions.sendToTab), Boolean(permissions.readTab)))
  }
  /** What `read_tab` returns for a tab (its last answer and state). @param {string} tab */
  read(tab) {
    return wrap(() => this.#native.read(tab))
  }
  /** The session a tab owns (send through `deliver`, read through it). @param {string} tab */
  async session(tab) {
    return new Session(await wrap(() => this.#native.session(tab)), this.#agent)
  }
  /** Cancels a tab's running turn. @param {string} tab */
  cancel(tab) {
    return wrap(() => this.#native.cancel(tab))
  }
  /**
   * Answers the question `tab`'s turn is parked on; the turn goes on in a new run (returned),
   * and queued messages follow when it ends. The answer counts as the person's message.
   * @param {string} tab
   * @param {string} clarificationId
   * @param {string} answer
   */
  async answerClarification(tab, clarificationId, answer) {
    const text = requireString(answer, 'answerClarification', 'answer')
    const n = await wrap(() => this.#native.answerClarification(tab, clarificationId, text))
    return new Run(n, this.#agent)
  }
  /**
   * Dismisses the question `tab`'s turn is parked on, without a turn (the person closed it);
   * messages held only for the person then start one, within the auto-wake budget.
   * @param {string} tab
   * @param {string} clarificationId
   */
  dismissClarification(tab, clarificationId) {
    return wrap(() => this.#native.dismissClarification(tab, clarificationId))
  }
  /**
   * Answers the approval `tab`'s turn is parked on (see `Session#resolveApproval`); the turn
   * goes on in a new run (returned), and queued messages follow when it ends.
   * @param {string} tab
   * @param {string} approvalId
   * @param {import('./approvals').ApprovalDecisions} decisions
   */
  async resolveApproval(tab, approvalId, decisions) {
    const normalized = approvalDecisions('resolveApproval', decisions)
    const n = await wrap(() => this.#native.resolveApproval(tab, approvalId, normalized))
    return new Run(n, this.#agent)
  }
  /**
   * Dismisses the approval `tab`'s turn is parked on, without a turn: its calls do not run;
   * messages held only for the person then start one, within the auto-wake budget.
   * @param {string} tab
   * @param {string} approvalId
   */
  dismissApproval(tab, approvalId) {
    return wrap(() => this.#native.dismissApproval(tab, approvalId))
  }
  /** Waits until a tab is idle; returns its info. @param {string} tab */
  waitIdle(tab) {
    return wrap(() => this.#native.waitIdle(tab))
  }
  /** Waits until every tab is idle. */
  waitAllIdle() {
    return this.#native.waitAllIdle()
  }
  /** The hub's events from now on (tab opened/closed, state changes, agent events, notices). */
  events() {
    const agent = this.#agent
    return iterate(this.#native.events(), (ev) => {
      if (ev.event) agent._event(ev.event)
      return ev
    })
  }
  /** Cancels running turns and refuses new ones. */
  close() {
    this.#agent.close()
  }
}

module.exports = { TabHub }
