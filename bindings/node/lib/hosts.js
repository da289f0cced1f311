'use strict'
/**
 * The page and tab tools over a BrowserHost written in JS.
 * @module agent-core/hosts
 */
const native = require('../index.js')
const { wrap, ConfigError, HostError } = require('./errors.js')
const { ToolSet } = require('./tools.js')

const HOST_CODES = new Set(['disconnected', 'timeout', 'script', 'navigation', 'no_such_tab'])

/**
 * The page and tab tools over a BrowserHost written in JS (puppeteer, playwright, Electron...).
 * @param {any} host an object with evaluate, navigate, tabs, openTab, closeTab, activateTab
 *   (and optionally waitSettled, resolveAddress)
 * page_scrape is gated and fetches public https addresses only unless `scrapeAllowLoopback`,
 * `scrapeLoopbackHttp` (loopback over http too) or `scrapeAllowPrivate` allow more;
 * `scrapeExtraRootsPem` adds trusted root certificates.
 * @param {{ searchTemplate?: string, settleTimeoutMs?: number, maxChars?: number, maxElements?: number, scrapeLoopbackHttp?: boolean, scrapeAllowLoopback?: boolean, scrapeAllowPrivate?: boolean, scrapeExtraRootsPem?: string[] }} [options]
 */
function pageTools(host, options = {}) {
  for (const m of ['evaluate', 'navigate', 'tabs', 'openTab', 'closeTab', 'activateTab']) {
    if (!host || typeof host[m] !== 'function') {
      throw new ConfigError(`pageTools(host): the host has no ${m}() method`, 'invalid_argument')
    }
  }
  const ok = (/** @type {unknown} */ value) => JSON.stringify({ ok: value === undefined ? null : value })
  const fail = (/** @type {any} */ e) =>
    JSON.stringify({
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
  const call = (/** @type {any} */ request) => {
    try {
      return Promise.resolve(dispatch(request)).then(ok, fail)
    } catch (e) {
      return fail(e)
    }
  }
  const {
    searchTemplate,
    settleTimeoutMs,
    maxChars,
    maxElements,
    scrapeLoopbackHttp,
    scrapeAllowLoopback,
    scrapeAllowPrivate,
    scrapeExtraRootsPem,
  } = options
  return new ToolSet(
    wrap(() =>
      native.pageTools(call, {
        searchTemplate,
        settleTimeoutMs,
        maxChars,
        maxElements,
        scrapeLoopbackHttp,
        scrapeAllowLoopback,
        scrapeAllowPrivate,
        scrapeExtraRootsPem: scrapeExtraRootsPem === undefined ? undefined : Array.from(scrapeExtraRootsPem, String),
        hostWaits: typeof host.waitSettled === 'function',
      }),
    ),
  )
}

module.exports = { pageTools }
