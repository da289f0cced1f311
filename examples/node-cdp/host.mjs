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

  /** Closes the browser and removes its profile. */
  async close() {
    await this.#browser.close().catch(() => {})
    fs.rmSync(this.#userDataDir, { recursive: true, force: true })
  }
}
