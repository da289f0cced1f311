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
 * The optional methods of a JS host the native side asks about (`HostMethods`): one that is
 * absent answers as the Rust `BrowserHost` default does ("not supported by this host", or no
 * dialog open) without a call into JS.
 */
const OPTIONAL = ['waitSettled', 'hover', 'pressKey', 'dialog', 'answerDialog', 'setFiles', 'screenshot', 'history']

/**
 * The bytes a host's `screenshot` returned, as a Buffer over the same memory (no copy): a
 * Buffer, any other Uint8Array or ArrayBuffer view, or an ArrayBuffer.
 * @param {unknown} value
 * @returns {Buffer}
 */
function imageBytes(value) {
  if (Buffer.isBuffer(value)) return value
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof ArrayBuffer) return Buffer.from(value)
  const kind = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value
  throw new HostError(`the host's screenshot() returned ${kind}, not the image's bytes (a Buffer or Uint8Array of PNG or JPEG)`)
}

/**
 * The native side of a JS BrowserHost: one function answering every request with a promise of
 * `{ ok }`, `{ bytes }` (a screenshot) or `{ error: { code, message } }`, never a rejection.
 * @param {any} host an object with evaluate, navigate, tabs, openTab, closeTab, activateTab
 *   (and optionally waitSettled, resolveAddress, hover, pressKey, dialog, answerDialog,
 *   setFiles, screenshot)
 * @param {string} who what the host was given to, for the error message
 */
function nativeHost(host, who) {
  for (const m of ['evaluate', 'navigate', 'tabs', 'openTab', 'closeTab', 'activateTab']) {
    if (!host || typeof host[m] !== 'function') {
      throw new ConfigError(`${who}: the host has no ${m}() method`, 'invalid_argument')
    }
  }
  const ok = (/** @type {unknown} */ value) => ({ ok: toJsonValue(value) })
  const bytes = (/** @type {unknown} */ value) => ({ bytes: imageBytes(value) })
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
      case 'hover':
        return host.hover(r.x, r.y, tab)
      case 'pressKey':
        return host.pressKey(r.arg, r.modifiers ?? [], tab)
      case 'dialog':
        return host.dialog(tab)
      case 'history':
        return host.history(tab)
      case 'answerDialog':
        return host.answerDialog(r.accept === true, r.arg ?? undefined, tab)
      case 'setFiles':
        return host.setFiles(r.arg, r.paths ?? [], tab)
      case 'screenshot':
        return host.screenshot(r.area, r.maxWidth, r.maxHeight, tab)
      default:
        throw new HostError(`unknown host operation ${r.op}`)
    }
  }
  // Always a promise: the native side awaits the reply.
  const call = (/** @type {any} */ request) => {
    try {
      return Promise.resolve(dispatch(request)).then(request.op === 'screenshot' ? bytes : ok).catch(fail)
    } catch (e) {
      return Promise.resolve(fail(e))
    }
  }
  /** @type {Record<string, boolean>} */
  const methods = {}
  for (const m of OPTIONAL) methods[m] = typeof host[m] === 'function'
  return wrap(() => new native.NativeBrowserHost(call, methods))
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
  const { ownTab, clarification, vision, instructions, ...rest } = options ?? {}
  const unknown = Object.keys(rest)
  if (unknown.length > 0) {
    throw new ConfigError(`browserPrompt: unknown option \`${unknown[0]}\` (expected ownTab, clarification, vision, instructions)`, 'invalid_argument')
  }
  for (const [name, value] of /** @type {const} */ ([['ownTab', ownTab], ['clarification', clarification], ['vision', vision]])) {
    if (value !== undefined && typeof value !== 'boolean') {
      throw new ConfigError(`browserPrompt: \`${name}\` must be a boolean`, 'invalid_argument')
    }
  }
  const paragraphs = instructions === undefined ? [] : typeof instructions === 'string' ? [instructions] : instructions
  if (!Array.isArray(paragraphs) || paragraphs.some((p) => typeof p !== 'string')) {
    throw new ConfigError('browserPrompt: `instructions` must be a string or an array of strings', 'invalid_argument')
  }
  return native.browserPrompt({ ownTab, clarification, vision, instructions: paragraphs })
}

module.exports = { pageTools, nativeHost, browserPrompt }
