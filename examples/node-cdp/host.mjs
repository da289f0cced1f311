// A BrowserHost for agent-core written with puppeteer-core: it launches Debian's
// /usr/bin/chromium headless (never a downloaded browser) with flags that keep it off the
// network, and maps agent-core's host operations onto pages.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import puppeteer from 'puppeteer-core'
import { HostError } from 'agent-core'

/** Flags that keep Chromium from reaching the network on its own (see notes/chromium-cdp.md). */
export const CLOSED_NETWORK_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--no-default-browser-check',
  '--disable-extensions',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--metrics-recording-only',
  '--no-pings',
  '--mute-audio',
  '--disable-features=AutofillServerCommunication,OptimizationHints,OptimizationGuideModelDownloading,OptimizationHintsFetching,OptimizationTargetPrediction,NetworkTimeServiceQuerying,MediaRouter,DialMediaRouteProvider',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1',
]

/** The tallest area a full-page screenshot takes, in CSS pixels (GPU textures stop at 16 384 device pixels). */
export const MAX_CAPTURE_HEIGHT = 16_384

/**
 * The clip scale that fits `width` x `height` device pixels into the bound: never above 1, and a
 * hair under the exact ratio so that rounding cannot exceed the bound by a pixel.
 */
export function fitScale(width, height, maxWidth, maxHeight) {
  const fit = Math.min(Math.max(1, maxWidth) / width, Math.max(1, maxHeight) / height)
  return fit >= 1 ? 1 : fit * (1 - 1e-6)
}

/** Puppeteer's name of a DOM key value where they differ. */
const PUPPETEER_KEYS = { ' ': 'Space' }

/** Implements agent-core's BrowserHost over puppeteer pages; tabs are named t1, t2, ... */
export class PuppeteerHost {
  #browser
  #userDataDir
  /** @type {Map<string, import('puppeteer-core').Page>} */
  #pages = new Map()
  #active = null
  #next = 1

  constructor(browser, userDataDir) {
    this.#browser = browser
    this.#userDataDir = userDataDir
  }

  /** Launches headless Chromium and adopts its first page as the active tab. */
  static async launch({ executablePath = process.env.AGENT_CHROMIUM || '/usr/bin/chromium' } = {}) {
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-core-cdp-'))
    const browser = await puppeteer.launch({
      executablePath,
      headless: true,
      userDataDir,
      args: CLOSED_NETWORK_ARGS,
      protocolTimeout: 30_000,
    })
    const host = new PuppeteerHost(browser, userDataDir)
    const [first] = await browser.pages()
    host.#adopt(first ?? (await browser.newPage()))
    return host
  }

  #adopt(page) {
    const id = `t${this.#next++}`
    this.#pages.set(id, page)
    this.#active ??= id
    return id
  }

  #page(tab) {
    if (!this.#browser.connected) throw new HostError('the browser is gone', 'disconnected')
    const id = tab ?? this.#active
    const page = this.#pages.get(id)
    if (!page) throw new HostError(`no tab ${id}`, 'no_such_tab')
    return page
  }

  async #info(id) {
    const page = this.#pages.get(id)
    return { id, url: page.url(), title: await page.title().catch(() => ''), active: id === this.#active }
  }

  /** The active page (for tests and demos that look at the browser directly). */
  page(tab) {
    return this.#page(tab)
  }

  async evaluate(expression, tab) {
    const page = this.#page(tab)
    try {
      return await page.evaluate(expression)
    } catch (e) {
      if (!this.#browser.connected) throw new HostError('the browser is gone', 'disconnected')
      throw new HostError(e.message, /timed out/i.test(e.message) ? 'timeout' : 'script')
    }
  }

  async navigate(url, tab) {
    const page = this.#page(tab)
    try {
      await page.goto(url, { waitUntil: 'load', timeout: 15_000 })
    } catch (e) {
      throw new HostError(e.message, e.name === 'TimeoutError' ? 'timeout' : 'navigation')
    }
  }

  async waitSettled(timeoutMs, tab) {
    const page = this.#page(tab)
    await page.waitForNetworkIdle({ idleTime: 100, timeout: timeoutMs }).catch(() => {})
  }

  async tabs() {
    return Promise.all([...this.#pages.keys()].map((id) => this.#info(id)))
  }

  async openTab(url) {
    const page = await this.#browser.newPage()
    const id = this.#adopt(page)
    if (url) await this.navigate(url, id)
    return this.#info(id)
  }

  async closeTab(tab) {
    const page = this.#page(tab)
    await page.close()
    this.#pages.delete(tab)
    if (this.#active === tab) this.#active = this.#pages.keys().next().value ?? null
  }

  async activateTab(tab) {
    await this.#page(tab).bringToFront()
    this.#active = tab
  }

  /** A CDP session of the page's own, made once. */
  #sessions = new WeakMap()
  async #cdp(page) {
    let session = this.#sessions.get(page)
    if (!session) {
      session = page.createCDPSession()
      this.#sessions.set(page, session)
    }
    return session
  }

  /**
   * Captures part of the tab as PNG bytes within maxWidth x maxHeight pixels: CDP
   * Page.captureScreenshot with a clip in document coordinates (the area's viewport
   * coordinates plus the scroll offsets), scaled by Chromium to the bound.
   */
  async screenshot(area, maxWidth, maxHeight, tab) {
    const page = this.#page(tab)
    try {
      const cdp = await this.#cdp(page)
      const metrics = await cdp.send('Page.getLayoutMetrics')
      const view = metrics.cssLayoutViewport
      let clip
      if (area.kind === 'full_page') {
        const content = metrics.cssContentSize
        clip = { x: 0, y: 0, width: content.width, height: Math.min(content.height, MAX_CAPTURE_HEIGHT) }
      } else if (area.kind === 'region') {
        clip = { x: view.pageX + area.x, y: view.pageY + area.y, width: area.width, height: area.height }
      } else {
        clip = { x: view.pageX, y: view.pageY, width: view.clientWidth, height: view.clientHeight }
      }
      clip.x = Math.max(0, clip.x)
      clip.y = Math.max(0, clip.y)
      clip.width = Math.max(1, clip.width)
      clip.height = Math.max(1, clip.height)
      const ratio = Number(await page.evaluate('window.devicePixelRatio')) || 1
      clip.scale = fitScale(clip.width * ratio, clip.height * ratio, maxWidth, maxHeight)
      const shot = await cdp.send('Page.captureScreenshot', {
        format: 'png',
        clip,
        fromSurface: true,
        captureBeyondViewport: area.kind !== 'viewport',
      })
      return Buffer.from(shot.data, 'base64')
    } catch (e) {
      if (!this.#browser.connected) throw new HostError('the browser is gone', 'disconnected')
      throw new HostError(`taking a screenshot: ${e.message}`)
    }
  }

  /** Puts files into the file input `element` (a JS expression) evaluates to; the page gets input and change. */
  async setFiles(element, paths, tab) {
    const page = this.#page(tab)
    const handle = await page.evaluateHandle(element)
    try {
      const input = handle.asElement()
      if (!input) throw new HostError('the file input is gone from the page', 'script')
      await input.uploadFile(...paths)
    } finally {
      await handle.dispose().catch(() => {})
    }
  }

  /** Moves the mouse pointer to (x, y), CSS px from the viewport's top left. */
  async hover(x, y, tab) {
    await this.#page(tab).mouse.move(x, y)
  }

  /** Presses one key (a DOM key value) with `modifiers` held. */
  async pressKey(key, modifiers, tab) {
    const { keyboard } = this.#page(tab)
    for (const m of modifiers) await keyboard.down(m)
    try {
      await keyboard.press(PUPPETEER_KEYS[key] ?? key)
    } finally {
      for (const m of [...modifiers].reverse()) await keyboard.up(m)
    }
  }

  /** Closes the browser and removes its profile. */
  async close() {
    await this.#browser.close().catch(() => {})
    fs.rmSync(this.#userDataDir, { recursive: true, force: true })
  }
}
