'use strict'
/**
 * Lifecycle hooks: objects whose methods run at fixed points of every turn (before and after
 * each model call and each tool call, and when the turn ended).
 * @module agent-core/hooks
 */
const { wrap, ConfigError } = require('./errors.js')
const { turnOrigin } = require('./gate.js')
const { toJsonText } = require('./tools.js')

/** The hook methods, in the order the native builder takes them. */
const METHODS = /** @type {const} */ (['beforeModelCall', 'afterModelCall', 'beforeToolCall', 'afterToolCall', 'turnEnded'])

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e))

/**
 * What the native side receives of what a hook returned: nothing for `undefined`, else JSON
 * text (faster to read than an object, and checked for cycles and depth), or why it is not
 * JSON.
 * @param {string} name
 * @param {unknown} value
 */
function reply(name, value) {
  if (value === undefined) return {}
  try {
    const json = toJsonText(value)
    return json === undefined ? { error: `${name} returned a ${typeof value}, not JSON data` } : { json }
  } catch (e) {
    return { error: `${name} returned a value that cannot become JSON: ${messageOf(e)}` }
  }
}

/**
 * Calls a hook method and answers the native side, at once or as a promise: a throw or a
 * rejection is the hook's failure, with the error's message.
 * @param {string} name
 * @param {() => unknown} call
 * @param {boolean} answers whether what the method returns matters (not for `turnEnded`)
 */
function settle(name, call, answers) {
  let answer
  try {
    answer = call()
  } catch (e) {
    return { error: messageOf(e) }
  }
  const done = (/** @type {unknown} */ value) => (answers ? reply(name, value) : {})
  if (answer !== null && typeof answer === 'object' && typeof (/** @type {any} */ (answer).then) === 'function') {
    return Promise.resolve(answer).then(done, (e) => ({ error: messageOf(e) }))
  }
  return done(answer)
}

/** A tool call as hooks see it. @param {any} c */
function toolCall(c) {
  return { sessionId: c.sessionId, callId: c.callId, tool: c.tool, arguments: c.arguments, origin: turnOrigin(c.origin) }
}

/**
 * Adds hooks objects to a native builder. Only the methods an object has cross into JS.
 * @param {any} b the NativeAgentBuilder
 * @param {unknown} hooks
 * @param {(outcome: any) => any} outcome how the agent completes an outcome (its `cause`)
 */
function addHooks(b, hooks, outcome) {
  if (!Array.isArray(hooks)) throw new ConfigError('`hooks` must be an array of hooks objects', 'invalid_argument')
  hooks.forEach((hook, i) => {
    if (hook === null || typeof hook !== 'object') {
      throw new ConfigError(`hooks[${i}] must be an object with hook methods (${METHODS.join(', ')})`, 'invalid_argument')
    }
    /** @type {Record<string, Function | undefined>} */
    const fns = {}
    for (const name of METHODS) {
      const f = hook[name]
      if (f !== undefined && f !== null && typeof f !== 'function') {
        throw new ConfigError(`hooks[${i}].${name} must be a function`, 'invalid_argument')
      }
      fns[name] = f ?? undefined
    }
    if (METHODS.every((name) => fns[name] === undefined)) {
      throw new ConfigError(`hooks[${i}] has none of the hook methods ${METHODS.join(', ')}`, 'invalid_argument')
    }
    const wrapper = (/** @type {string} */ name, /** @type {(f: Function, input: any) => unknown} */ invoke) => {
      const f = fns[name]
      if (f === undefined) return undefined
      return (/** @type {any} */ input) => settle(name, () => invoke(f, input), name !== 'turnEnded')
    }
    wrap(() =>
      b.hooks(
        wrapper('beforeModelCall', (f, input) => f.call(hook, input.sessionId, input.value)),
        wrapper('afterModelCall', (f, input) => f.call(hook, input.sessionId, input.value)),
        wrapper('beforeToolCall', (f, input) => f.call(hook, toolCall(input.call))),
        wrapper('afterToolCall', (f, input) => f.call(hook, toolCall(input.call), input.value)),
        wrapper('turnEnded', (f, input) => f.call(hook, input.sessionId, outcome(input.value))),
      ),
    )
  })
}

module.exports = { addHooks }
