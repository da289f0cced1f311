'use strict'
/**
 * The page and tab tools over a BrowserHost written in JS.
 * @module agent-core/hosts
 */
const native = require('../index.js')
const { wrap, ConfigError, HostError } = require('./errors.js')
const { ToolSet, toJsonValue } = require('./tools.js')

const HOST_CODES = new Set(['disconnected', 'timeout', 'script', 'navigation', 'no_such_tab'])

/**
 * The native side of a JS BrowserHost: one function answering every host request with a promise
 * of `{ ok }` or `{ error: { code, message } }`, never a rejection.
 * @param {any} host an object with evaluate, navigate, tabs, openTab, closeTab, activateTab
 *   (and optionally waitSettled, resolveAddress)
 * @param {string} who what the host was given to, for the error message
 */
function nativeHost(host, who) {
  for (const m of ['evaluate', 'navigate', 'tabs', 'openTab', 'closeTab', 'activateTab']) {
    if (!host || typeof host[m] !== 'function') {
      throw new ConfigError(`${who}: the host has no ${m}() method`, 'invalid_argument')
    }
  }
  const ok = (/** @type {unknown} */ value) => ({ ok: toJsonValue(value) })
  const fail = (/** @type {any} */ e) => ({
    error: {
      code: e && HOST_CODES.has(e.code) ? e.code : 'other',
      message: e instanceof Error ? e.message : String(e),
    },
  })
  const dispatch = (/** @type {any} */ r) => {
    const tab = r.tab ?? undefined
    switch (r.op) {
      case 'evaluate':
        return host.evaluate(r.arg, tab)
      case 'navigate':
        return host.navigate(r.arg, tab)
      case 'waitSettled':
        return host.waitSettled(r.timeoutMs, tab)
      case 'tabs':
        return host.tabs()
      case 'openTab':
        return host.openTab(r.arg ?? undefined)
      case 'closeTab':
        return host.closeTab(r.tab)
      case 'activateTab':
        return host.activateTab(r.tab)
      case 'resolveAddress':
        return typeof host.resolveAddress === 'function' ? host.resolveAddress(r.arg) : null
      default:
        throw new HostError(`unknown host operation ${r.op}`)
    }
  }
  // Always a promise: the native side awaits the reply.
  const call = (/** @type {any} */ request) => {
    try {
      return Promise.resolve(dispatch(request)).then(ok, fail)
    } catch (e) {
      return Promise.resolve(fail(e))
    }
  }
  return wrap(() => new native.NativeBrowserHost(call, typeof host.waitSettled === 'function'))
}

/**
 * The page and tab tools over a BrowserHost written in JS (puppeteer, playwright, Electron...).
 * page_scrape is gated and fetches public https addresses only unless `scrape: { allowLoopback,
 * allowLoopbackHttp, allowPrivate }` (or `scrapeLoopbackHttp`) allow more; `scrape.extraRootsPem`
 * adds trusted root certificates. The options are the `PageToolsConfig` of the options format,
 * read by the native module, plus `tab`: a host tab id the tools act on whatever tab is active
 * (without it they act on the active tab).
 * @param {any} host see `nativeHost`
 * @param {import('./hosts').PageToolsTabOptions} [options]
 */
function pageTools(host, options = {}) {
  const { tab, ...config } = options ?? {}
  if (tab !== undefined && tab !== null && (typeof tab !== 'string' || tab === '')) {
    throw new ConfigError('pageTools(host, { tab }): `tab` must be a host tab id (a non-empty string, as the host\'s tabs() reports it)', 'invalid_argument')
  }
  const h = nativeHost(host, 'pageTools(host)')
  return new ToolSet(wrap(() => native.pageTools(h, config, tab ?? undefined)))
}

/**
 * The default system prompt for an agent with page tools (the Rust `BrowserPrompt`): what the
 * tools are and the rules it follows in someone else's browser; `instructions` (a string or a
 * list of paragraphs) come after the rules.
 * @param {import('./hosts').BrowserPromptOptions} [options]
 * @returns {string}
 */
function browserPrompt(options = {}) {
  const { ownTab, clarification, instructions, ...rest } = options ?? {}
  const unknown = Object.keys(rest)
  if (unknown.length > 0) {
    throw new ConfigError(`browserPrompt: unknown option \`${unknown[0]}\` (expected ownTab, clarification, instructions)`, 'invalid_argument')
  }
  for (const [name, value] of /** @type {const} */ ([['ownTab', ownTab], ['clarification', clarification]])) {
    if (value !== undefined && typeof value !== 'boolean') {
      throw new ConfigError(`browserPrompt: \`${name}\` must be a boolean`, 'invalid_argument')
    }
  }
  const paragraphs = instructions === undefined ? [] : typeof instructions === 'string' ? [instructions] : instructions
  if (!Array.isArray(paragraphs) || paragraphs.some((p) => typeof p !== 'string')) {
    throw new ConfigError('browserPrompt: `instructions` must be a string or an array of strings', 'invalid_argument')
  }
  return native.browserPrompt({ ownTab, clarification, instructions: paragraphs })
}

module.exports = { pageTools, nativeHost, browserPrompt }
