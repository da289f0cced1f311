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
 * The page and tab tools over a BrowserHost written in JS (puppeteer, playwright, Electron...).
 * @param {any} host an object with evaluate, navigate, tabs, openTab, closeTab, activateTab
 *   (and optionally waitSettled, resolveAddress)
 * page_scrape is gated and fetches public https addresses only unless `scrape: { allowLoopback,
 * allowLoopbackHttp, allowPrivate }` (or `scrapeLoopbackHttp`) allow more; `scrape.extraRootsPem`
 * adds trusted root certificates. The options are the `PageToolsConfig` of the options format,
 * read by the native module.
 * @param {import('./hosts').PageToolsOptions} [options]
 */
function pageTools(host, options = {}) {
  for (const m of ['evaluate', 'navigate', 'tabs', 'openTab', 'closeTab', 'activateTab']) {
    if (!host || typeof host[m] !== 'function') {
      throw new ConfigError(`pageTools(host): the host has no ${m}() method`, 'invalid_argument')
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
  return new ToolSet(wrap(() => native.pageTools(call, options, typeof host.waitSettled === 'function')))
}

module.exports = { pageTools }
