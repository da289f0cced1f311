'use strict'
/**
 * How a tab hub wires its tabs to the browser tabs of a JS host: page tools bound to the
 * browser tab each hub tab is wired to, and who gets a browser tab an agent opens. Read by
 * `TabHub.create` from its `pageTools` and `openedTabPolicy` options.
 * @module agent-core/tab_wiring
 */
const native = require('../index.js')
const { wrap, ConfigError } = require('./errors.js')
const { nativeHost } = require('./hosts.js')

const OWNERS = new Set(['same_agent', 'new_agent'])

/** @param {string} message */
function warn(message) {
  // The policy runs inside an agent's tool call: a broken one must not end the turn, but the
  // host's developer should hear about it, the way Node reports such things.
  process.emitWarning(`agent-core: ${message}; the tab stays with the agent that opened it`)
}

/**
 * The opened-tab policy as the native side calls it: a name it reads itself, or a function
 * that always answers an owner synchronously and never throws (the hub waits for it inside a
 * tool call).
 * @param {unknown} policy
 */
function policyOf(policy) {
  if (policy === undefined || policy === null || typeof policy === 'string') return policy
  if (typeof policy !== 'function') {
    throw new ConfigError(
      "TabHub.create: `openedTabPolicy` must be 'same_agent', 'new_agent' or a function (opened) => 'same_agent' | 'new_agent'",
      'invalid_argument',
    )
  }
  return (/** @type {any} */ opened) => {
    let answer
    try {
      answer = policy(opened)
    } catch (e) {
      warn(`openedTabPolicy threw: ${e instanceof Error ? e.message : String(e)}`)
      return 'same_agent'
    }
    if (OWNERS.has(answer)) return answer
    const promise = answer !== null && typeof answer === 'object' && typeof answer.then === 'function'
    warn(
      promise
        ? 'openedTabPolicy returned a promise: it must answer synchronously'
        : `openedTabPolicy returned ${JSON.stringify(answer) ?? String(answer)}, not 'same_agent' or 'new_agent'`,
    )
    return 'same_agent'
  }
}

/**
 * The native wiring of a hub, or undefined when it has none.
 * @param {any} pageTools a BrowserHost, or `{ host, ...PageToolsOptions }`
 * @param {unknown} openedTabPolicy
 * @param {unknown[] | undefined} tools the hub agents' other tools
 */
function tabWiring(pageTools, openedTabPolicy, tools) {
  if ((pageTools === undefined || pageTools === null) && (openedTabPolicy === undefined || openedTabPolicy === null)) {
    return undefined
  }
  let host
  let config
  if (pageTools !== undefined && pageTools !== null) {
    if (typeof pageTools === 'object' && typeof pageTools.evaluate === 'function') {
      host = pageTools
    } else if (typeof pageTools === 'object' && pageTools.host) {
      ;({ host, ...config } = pageTools)
    } else {
      throw new ConfigError(
        'TabHub.create: `pageTools` must be a BrowserHost or { host, ...page tool options }, host being the BrowserHost the tools act through',
        'invalid_argument',
      )
    }
    if ((tools ?? []).some((t) => Array.isArray(/** @type {any} */ (t)?.names) && /** @type {any} */ (t).names.includes('page_read'))) {
      throw new ConfigError(
        "TabHub.create: page tools are given twice: `pageTools` gives each tab's agent its own, bound to its browser tab; remove the pageTools(host) set from `tools`",
        'invalid_argument',
      )
    }
  }
  const h = host === undefined ? undefined : nativeHost(host, 'TabHub.create({ pageTools: { host } })')
  return wrap(() => new native.NativeTabWiring(h, config, policyOf(openedTabPolicy)))
}

module.exports = { tabWiring }
