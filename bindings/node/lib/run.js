'use strict'
/**
 * Runs: one turn each, in the background, with its status, outcome and events.
 * @module agent-core/run
 */
const { RunError } = require('./errors.js')
const { iterate } = require('./events.js')

/**
 * Cancels `nativeRun` when `signal` aborts (at once when it already has), and stops listening
 * once the run ends so a long-lived signal does not collect listeners.
 * @param {AbortSignal | undefined} signal
 * @param {any} nativeRun
 * @param {Run} run
 */
function cancelOnAbort(signal, nativeRun, run) {
  if (!signal) return
  if (signal.aborted) {
    nativeRun.cancel()
    return
  }
  const onAbort = () => nativeRun.cancel()
  signal.addEventListener('abort', onAbort, { once: true })
  run.outcome.then(() => signal.removeEventListener('abort', onAbort))
}

/** One turn, running in the background. */
class Run {
  #native
  #agent
  /** Whether the turn is typed (`sendTyped`, a typed delivery): `result()` gives the answer. */
  #typed
  /** @type {Promise<any> | undefined} */
  #outcome
  /** @type {string | undefined} */
  #id
  /** @type {string | undefined} */
  #sessionId

  /** @internal */
  constructor(/** @type {any} */ nativeRun, /** @type {Agent} */ agent, typed = false) {
    this.#native = nativeRun
    this.#agent = agent
    this.#typed = typed
  }

  // The ids are read from the native run when first asked for: each read crosses into the
  // native module (about 4 000 instructions), and most callers only await the outcome.
  /** The run's id. */
  get id() {
    return (this.#id ??= this.#native.id)
  }

  /** The session's id. */
  get sessionId() {
    return (this.#sessionId ??= this.#native.sessionId)
  }

  /** What `JSON.stringify` writes of the run: its ids. */
  toJSON() {
    return { id: this.id, sessionId: this.sessionId }
  }

  /** A snapshot of the run's progress: `{ state, iteration, currentTool, lastMessage, error }`. */
  status() {
    return this.#native.status()
  }

  /** Asks the run to stop; it ends `cancelled` promptly. */
  cancel() {
    this.#native.cancel()
  }

  /** Whether the run has finished. */
  get finished() {
    return this.#native.finished
  }

  /** The outcome, once the run ends (never rejects: look at `status`). */
  get outcome() {
    this.#outcome ??= this.#native.outcome().then((/** @type {any} */ o) => this.#agent._outcome(o))
    return this.#outcome
  }

  /**
   * The final answer: its text, or for a typed turn (`sendTyped`, a typed delivery) the parsed,
   * checked answer (`outcome.structured`; the raw text stays in `outcome.finalText`), as
   * Python's typed outcome gives it. Throws unless the run ended `done`: the original error
   * when a JS tool threw a fatal error, a `RunError` otherwise.
   */
  async result() {
    const o = await this.outcome
    if (o.status === 'done') return this.#typed ? o.structured : (o.finalText ?? '')
    if (o.cause !== undefined) throw o.cause
    const code = o.errorKind ?? o.status
    throw new RunError(o.error ?? `the run ended ${o.status}`, code, o)
  }

  /**
   * The run's events as an async iterator. The first call sees every event from `run_started`;
   * later calls see events from then on. Ends after the final event.
   */
  events() {
    const agent = this.#agent
    return iterate(this.#native.events(), (ev) => agent._event(ev))
  }
}

module.exports = { Run, cancelOnAbort }
