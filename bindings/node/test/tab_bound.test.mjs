// One agent per browser tab: page tools bound to a host tab (`pageTools(host, { tab })`), and a
// tab hub whose tabs' agents get page tools bound to the browser tab each is wired to.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { Agent, ConfigError, ScriptedProvider, TabHub, pageTools } from '../lib/index.js'
import { collect } from './helpers.mjs'
import { RecordingHost, pageReader } from './recording-host.mjs'

const PAGES = () => ({
  t1: { url: 'http://127.0.0.1:9/apples', title: 'Page A', text: 'apples are red' },
  t2: { url: 'http://127.0.0.1:9/bananas', title: 'Page B', text: 'bananas are yellow' },
})

const failures = (events) => events.filter((e) => e.type === 'tool_call_failed').map((e) => e.error)

test('two agents with tools bound to two host tabs read at the same time, each only its own tab', async () => {
  // t2 is the active tab: the agent bound to t1 must not read it.
  const host = new RecordingHost(PAGES(), { active: 't2', rendezvous: 2 })
  const agentFor = (tab) => new Agent({ provider: ScriptedProvider.fromFn(pageReader), tools: [pageTools(host, { tab })] })
  const [a, b] = [agentFor('t1'), agentFor('t2')]
  const [sa, sb] = [await a.createSession(), await b.createSession()]
  const [oa, ob] = await Promise.all([sa.send('What is on my page?').outcome, sb.send('What is on my page?').outcome])
  assert.equal(oa.status, 'done', oa.error ?? '')
  assert.equal(ob.status, 'done', ob.error ?? '')
  assert.match(oa.finalText, /Page A/)
  assert.match(oa.finalText, /apples are red/)
  assert.doesNotMatch(oa.finalText, /Page B|bananas/)
  assert.match(ob.finalText, /Page B/)
  assert.doesNotMatch(ob.finalText, /Page A|apples/)
  // Both reads were in the host at once, and every request named its tab (none the active one).
  assert.equal(host.maxInFlight, 2)
  const evaluated = host.calls.filter((c) => c.op === 'evaluate').map((c) => c.tab)
  assert.ok(evaluated.includes('t1') && evaluated.includes('t2'))
  assert.ok(evaluated.every((t) => t === 't1' || t === 't2'), `requests for the active tab: ${evaluated}`)

  // The person closes t1: the agent bound to it gets an error that says what to do, and does
  // not reach the host again for it.
  host.rendezvous = 1
  host.closeTab('t1')
  let run = sa.send('Read it again')
  let events = await collect(run)
  let [error] = failures(events)
  assert.match(error, /this agent's browser tab t1 was closed/)
  assert.match(error, /Do not retry them: tell the person the tab was closed, or open a new tab with tab_open/)
  const before = host.calls.length
  events = await collect(sa.send('And again'))
  ;[error] = failures(events)
  assert.match(error, /browser tab t1 was closed/)
  assert.equal(host.calls.length, before, 'a closed tab is not asked for again')
  // The other agent goes on in its own tab.
  assert.match((await sb.send('Once more').outcome).finalText, /Page B/)
  a.close()
  b.close()
})

test('pageTools(host, { tab }) refuses a tab that is not a host tab id', () => {
  const host = new RecordingHost(PAGES())
  assert.throws(() => pageTools(host, { tab: 42 }), (e) => e instanceof ConfigError && /host tab id/.test(e.message))
  assert.throws(() => pageTools(host, { tab: '' }), ConfigError)
  assert.ok(pageTools(host, { tab: null }).names.includes('page_read'))
})

test('a tab hub gives each tab page tools bound to its wired browser tab; the wiring methods round-trip', async () => {
  const host = new RecordingHost(PAGES(), { active: 't2', rendezvous: 2 })
  const hub = await TabHub.create({ provider: ScriptedProvider.fromFn(pageReader), pageTools: { host, settleTimeoutMs: 200 } })
  const a = await hub.openTabForHost('t1')
  const b = await hub.openTabForHost('t2')
  assert.deepEqual(hub.hostTab(a), { state: 'open', hostTab: 't1' })
  assert.deepEqual(hub.hostTabs(b), ['t2'])
  assert.equal(hub.tabForHost('t1'), a)
  assert.equal(hub.tabForHost('t2'), b)
  assert.equal(hub.tabForHost('elsewhere'), null)
  const plain = await hub.openTab()
  assert.deepEqual(hub.hostTab(plain), { state: 'unwired' })
  assert.deepEqual(hub.hostTabs(plain), [])

  // Both tabs' agents read at once, each its own browser tab.
  const [da, db] = await Promise.all([hub.deliver(a, 'What is on my page?'), hub.deliver(b, 'What is on my page?')])
  const [oa, ob] = await Promise.all([da.run.outcome, db.run.outcome])
  assert.match(oa.finalText, /Page A/)
  assert.doesNotMatch(oa.finalText, /Page B/)
  assert.match(ob.finalText, /Page B/)
  assert.doesNotMatch(ob.finalText, /Page A/)
  assert.equal(host.maxInFlight, 2)
  host.rendezvous = 1
  await hub.waitAllIdle()

  // A tab without a browser tab says so (the planner answers with the tool's result; the hub
  // has read the run's events already).
  // The hub sees a turn end just after its run does: wait for that before the next message,
  // or the message is queued behind the ending turn (status 'queued', no run).
  const answer = async (tab, text) => {
    const outcome = await (await hub.deliver(tab, text)).run.outcome
    await hub.waitIdle(tab)
    return outcome.finalText
  }
  assert.match(await answer(plain, 'read'), /no browser tab is attached to this agent's tab yet/)

  // The host reports t1 closed: its hub tab stays open, its page tools say what to do.
  assert.equal(hub.hostTabClosed('t1'), a)
  assert.equal(hub.hostTabClosed('t1'), null)
  assert.deepEqual(hub.hostTab(a), { state: 'closed', hostTab: 't1' })
  assert.deepEqual(hub.hostTabs(a), [])
  assert.equal(hub.tab(a).open, true)
  assert.match(await answer(a, 'read'), /this agent's browser tab t1 was closed/)

  // Wired to another browser tab, the agent works there from its next call.
  host.add('t3', { url: 'http://127.0.0.1:9/cherries', title: 'Page C', text: 'cherries' })
  hub.wireHostTab(a, 't3')
  assert.deepEqual(hub.hostTab(a), { state: 'open', hostTab: 't3' })
  assert.match(await answer(a, 'read'), /Page C/)
  // Wiring it to b takes it from a.
  hub.wireHostTab(b, 't3')
  assert.equal(hub.tabForHost('t3'), b)
  assert.deepEqual(hub.hostTabs(b), ['t2', 't3'])
  assert.deepEqual(hub.hostTab(a), { state: 'unwired' })

  // Ids that are not the hub's are refused with what to do.
  const stranger = randomUUID()
  assert.throws(() => hub.hostTab(stranger), (e) => e.code === 'tab_not_found' && /openTabForHost/.test(e.message))
  assert.throws(() => hub.wireHostTab(stranger, 't2'), (e) => e.code === 'tab_not_found')
  assert.throws(() => hub.hostTabs('not a tab id'), (e) => e instanceof ConfigError && e.code === 'invalid_argument')
  hub.close()
})

/** A planner that opens a tab at `url` on the person's message, then answers with the result. */
const opener = (url) => (request) => {
  const last = request.messages.at(-1)
  if (last.role === 'tool') return { text: last.content.map((p) => p.text ?? '').join('') }
  return { toolCalls: [{ name: 'tab_open', arguments: { url } }] }
}

test('openedTabPolicy: a tab an agent opens stays with it, goes to a new agent, or as a function decides', async () => {
  const host = new RecordingHost(PAGES())
  // `pageTools: host` is `{ host }` with the default page tool options.
  const make = (openedTabPolicy, url) =>
    TabHub.create({ provider: ScriptedProvider.fromFn(opener(url)), pageTools: host, openedTabPolicy, gate: () => true })

  // Default: the opener keeps it and works in it.
  let hub = await make(undefined, 'http://127.0.0.1:9/next')
  let a = await hub.openTabForHost('t1')
  let o = await (await hub.deliver(a, 'open a tab')).run.outcome
  assert.match(o.finalText, /you work in it/)
  const [mine] = hub.hostTabs(a).filter((t) => t !== 't1')
  assert.equal(hub.tabForHost(mine), a)
  assert.deepEqual(hub.hostTab(a), { state: 'open', hostTab: mine })
  hub.close()

  // new_agent: a new hub tab gets it; the opener stays in its own tab.
  hub = await make('new_agent', 'http://127.0.0.1:9/next')
  a = await hub.openTabForHost('t2')
  o = await (await hub.deliver(a, 'open a tab')).run.outcome
  assert.match(o.finalText, /the host gave it to a new agent/)
  assert.deepEqual(hub.hostTab(a), { state: 'open', hostTab: 't2' })
  const other = hub.tabs().find((t) => t.id !== a)
  assert.ok(other)
  const [given] = hub.hostTabs(other.id)
  assert.equal(hub.tabForHost(given), other.id)
  hub.close()

  // A function sees who opened what, and decides per tab; adoptHostTab asks it too.
  const seen = []
  hub = await make((opened) => {
    seen.push(opened)
    return opened.url.includes('popup') ? 'new_agent' : 'same_agent'
  }, 'http://127.0.0.1:9/popup')
  a = await hub.openTabForHost('t1')
  o = await (await hub.deliver(a, 'open a tab')).run.outcome
  assert.match(o.finalText, /new agent/)
  assert.equal(seen.length, 1)
  assert.equal(seen[0].opener, a)
  assert.equal(seen[0].url, 'http://127.0.0.1:9/popup')
  assert.notEqual(hub.tabForHost(seen[0].hostTab), a)
  host.add('t8', { url: 'http://127.0.0.1:9/plain', title: 'Plain', text: '' })
  assert.equal(await hub.adoptHostTab(a, 't8', 'http://127.0.0.1:9/plain'), a)
  assert.deepEqual(hub.hostTab(a), { state: 'open', hostTab: 't8' })
  assert.deepEqual(seen.at(-1), { opener: a, hostTab: 't8', url: 'http://127.0.0.1:9/plain' })
  hub.close()

  // A policy that throws keeps the default, with a warning.
  const warnings = []
  const onWarning = (w) => warnings.push(w.message)
  process.on('warning', onWarning)
  try {
    hub = await make(() => {
      throw new Error('policy broke')
    }, 'http://127.0.0.1:9/next')
    a = await hub.openTabForHost('t2')
    assert.equal(await hub.adoptHostTab(a, 't1'), a)
    await new Promise((r) => setImmediate(r))
    assert.ok(warnings.some((m) => /openedTabPolicy threw: policy broke; the tab stays with the agent that opened it/.test(m)), warnings.join('\n'))
    hub.close()
  } finally {
    process.off('warning', onWarning)
  }
})

test('TabHub.create refuses wiring options that cannot work, saying what to do', async () => {
  const host = new RecordingHost(PAGES())
  const provider = new ScriptedProvider([])
  await assert.rejects(TabHub.create({ provider, openedTabPolicy: 'sameAgent' }), (e) => {
    assert.ok(e instanceof ConfigError)
    assert.match(e.message, /use 'same_agent', 'new_agent' or a function/)
    return true
  })
  await assert.rejects(TabHub.create({ provider, openedTabPolicy: 7 }), ConfigError)
  await assert.rejects(TabHub.create({ provider, pageTools: { settleTimeoutMs: 100 } }), /host being the BrowserHost/)
  await assert.rejects(TabHub.create({ provider, pageTools: { host, settleTimeoutSecs: 1 } }), /unknown field `settleTimeoutSecs`/)
  await assert.rejects(
    TabHub.create({ provider, tools: [pageTools(host)], pageTools: { host } }),
    /page tools are given twice/,
  )
})
