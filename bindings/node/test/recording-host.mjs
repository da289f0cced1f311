// A BrowserHost over fake tabs for the tab-bound page tool tests: each tab is a page with an
// address, a title and text, every request is recorded with the tab it names, and page reads
// can be made to wait for each other to prove that two agents read at the same time.
import { HostError } from '../lib/index.js'

/** The page.js operation of an `evaluate` expression (`(<page.js>)("read", {...})`), if any. */
function pageOp(expression) {
  const m = /\)\("(\w+)", (\{[^]*\})\)$/.exec(expression)
  return m ? { op: m[1], args: JSON.parse(m[2]) } : null
}

export class RecordingHost {
  /** @type {Map<string, { url: string, title: string, text: string }>} */
  #tabs
  #active
  #next = 1
  /** Reads in progress, and the most there ever were at once. */
  #inFlight = 0
  maxInFlight = 0
  /** @type {{ op: string, tab: string | undefined }[]} */
  calls = []
  /** @type {(() => void)[]} */
  #waiting = []

  /**
   * @param {Record<string, { url: string, title: string, text: string }>} pages by tab id
   * @param {{ active?: string, rendezvous?: number }} [options] `rendezvous`: page reads wait
   *   (up to 5 s) until this many are in progress
   */
  constructor(pages, { active, rendezvous = 1 } = {}) {
    this.#tabs = new Map(Object.entries(pages))
    this.#active = active ?? this.#tabs.keys().next().value
    this.rendezvous = rendezvous
  }

  #page(tab) {
    const id = tab ?? this.#active
    const page = this.#tabs.get(id)
    if (!page) throw new HostError(`no tab ${id}`, 'no_such_tab')
    return page
  }

  /** Waits until `rendezvous` reads are in progress (or 5 s passed: the test then fails on maxInFlight). */
  async #meet() {
    this.#inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight)
    try {
      if (this.#inFlight >= this.rendezvous) {
        for (const wake of this.#waiting.splice(0)) wake()
        return
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 5000)
        this.#waiting.push(() => (clearTimeout(timer), resolve()))
      })
    } finally {
      this.#inFlight--
    }
  }

  async evaluate(expression, tab) {
    this.calls.push({ op: 'evaluate', tab })
    const page = this.#page(tab)
    if (expression === 'location.href') return page.url
    const call = pageOp(expression)
    if (call?.op === 'read') {
      await this.#meet()
      // Still there after the wait? The tab may have closed meanwhile.
      const now = this.#page(tab)
      return {
        doc: call.args.doc,
        url: now.url,
        title: now.title,
        readyState: 'complete',
        textPreview: now.text,
        counts: { chars: now.text.length },
        items: [],
      }
    }
    return null
  }

  async navigate(url, tab) {
    this.calls.push({ op: 'navigate', tab })
    this.#page(tab).url = url
  }

  async waitSettled(_timeoutMs, tab) {
    this.calls.push({ op: 'waitSettled', tab })
    this.#page(tab)
  }

  tabs() {
    this.calls.push({ op: 'tabs', tab: undefined })
    return [...this.#tabs].map(([id, p]) => ({ id, url: p.url, title: p.title, active: id === this.#active }))
  }

  openTab(url) {
    this.calls.push({ op: 'openTab', tab: undefined })
    const id = `new${this.#next++}`
    this.#tabs.set(id, { url: url ?? 'about:blank', title: `Opened ${id}`, text: '' })
    this.#active = id
    return { id, url: url ?? 'about:blank', title: `Opened ${id}`, active: true }
  }

  /** Closes a tab, as the person (or an agent's tab_close) would. */
  closeTab(tab) {
    this.calls.push({ op: 'closeTab', tab })
    this.#page(tab)
    this.#tabs.delete(tab)
    if (this.#active === tab) this.#active = this.#tabs.keys().next().value
  }

  activateTab(tab) {
    this.calls.push({ op: 'activateTab', tab })
    this.#page(tab)
    this.#active = tab
  }

  /** Adds a tab the person opened. */
  add(id, page) {
    this.#tabs.set(id, page)
  }
}

/**
 * A scripted planner for a page reader (a function, not a model): a person's message gets a
 * page_read, the tool's result gets an answer quoting it.
 */
export function pageReader(request) {
  const last = request.messages.at(-1)
  if (last.role === 'tool') return { text: `read: ${last.content.map((p) => p.text ?? '').join('')}` }
  return { toolCalls: [{ name: 'page_read', arguments: {} }] }
}
