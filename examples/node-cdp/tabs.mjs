// One agent per browser tab, in real Chromium: a TabHub gives every hub tab an agent whose page
// tools act on the browser tab it is wired to, whatever tab is in front.
//
//   node tabs.mjs
//
// Two tabs open the two fixture pages; both agents read their own page at the same time while
// a third tab is in front. Then the person closes one tab: its agent's page tools say so, and
// the other agent goes on. The "model" is ScriptedProvider.fromFn (a function, not an LLM).
import { fileURLToPath } from 'node:url'
import { ScriptedProvider, TabHub } from 'agent-core'
import { PuppeteerHost } from './host.mjs'
import { serveFixtures } from './serve.mjs'

/**
 * A page reader: a person's message gets a page_read; its result gets an answer quoting the
 * page's title, or the whole error when the tool failed.
 */
function pageReader(request) {
  const last = request.messages.at(-1)
  if (last.role !== 'tool') return { toolCalls: [{ name: 'page_read', arguments: {} }] }
  const text = last.content.map((p) => p.text ?? '').join('')
  if (last.isError) return { text: `My page tools failed: ${text}` }
  return { text: `My page: ${text.split('\n').find((l) => l.startsWith('title:'))}` }
}

/**
 * Runs the demo. Returns what each agent answered, for the test.
 * @param {{ quiet?: boolean }} [options]
 */
export async function runTabAgents({ quiet = false } = {}) {
  const server = await serveFixtures()
  const host = await PuppeteerHost.launch()
  const log = (/** @type {string} */ line) => quiet || console.log(line)
  try {
    const hub = await TabHub.create({
      provider: ScriptedProvider.fromFn(pageReader),
      pageTools: { host, settleTimeoutMs: 2000 },
    })
    const links = await host.openTab(`${server.base}/links.html`)
    const form = await host.openTab(`${server.base}/form.html`)
    // The first tab, blank, stays in front: neither agent may read it.
    const [a, b] = [await hub.openTabForHost(links.id), await hub.openTabForHost(form.id)]
    const [da, db] = await Promise.all([hub.deliver(a, 'What is on your page?'), hub.deliver(b, 'What is on your page?')])
    const [oa, ob] = await Promise.all([da.run.outcome, db.run.outcome])
    log(`tab ${hub.handle(a)} (${links.id}): ${oa.finalText}`)
    log(`tab ${hub.handle(b)} (${form.id}): ${ob.finalText}`)

    // The person closes the links tab; the host tells the hub.
    await host.closeTab(links.id)
    hub.hostTabClosed(links.id)
    const closed = await (await hub.deliver(a, 'Read your page again')).run.outcome
    log(`tab ${hub.handle(a)} after its browser tab closed: ${closed.finalText}`)
    const again = await (await hub.deliver(b, 'And yours?')).run.outcome
    hub.close()
    return { links: oa.finalText, form: ob.finalText, closed: closed.finalText, formAgain: again.finalText }
  } finally {
    await host.close()
    await server.close()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runTabAgents()
}
