import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ConfigError, ScriptedProvider, TabHub } from '../lib/index.js'

test('a tab hub: tabs with handles, deliver starts or queues, send_to_tab between tabs', async () => {
  const provider = ScriptedProvider.fromFn((request) => {
    const user = request.messages.filter((m) => m.role === 'user').at(-1).content[0].text
    const results = request.messages.filter((m) => m.role === 'tool')
    const tools = request.tools.map((t) => t.name)
    if (user.startsWith('ask the other tab') && tools.includes('send_to_tab') && results.length === 0) {
      const handle = user.split(' ').at(-1)
      return { toolCalls: [{ name: 'send_to_tab', arguments: { tab_id: handle, message: 'hello from A' } }] }
    }
    return { text: `answered: ${user}` }
  })
  const hub = await TabHub.create({ provider, autoWakeBudget: 2 })
  const a = await hub.openTab({ sendToTab: true, readTab: true })
  const b = await hub.openTab()
  const ha = hub.handle(a)
  const hb = hub.handle(b)
  assert.ok(ha && hb && ha !== hb)
  assert.deepEqual(hub.resolve(hb), { status: 'ok', tab: b, handle: hb })
  assert.equal(hub.resolve('ffffff').status, 'none')
  assert.equal(hub.tabs().length, 2)

  const events = []
  const stream = hub.events()
  const collecting = (async () => {
    for await (const ev of stream) {
      events.push(ev)
      if (events.filter((e) => e.type === 'agent' && e.event.type === 'run_completed').length >= 2) break
    }
  })()

  const d = await hub.deliver(a, `ask the other tab ${hb}`)
  assert.equal(d.status, 'started')
  assert.ok(d.run)
  const o = await d.run.outcome
  assert.equal(o.status, 'done')
  await hub.waitAllIdle()
  const snap = await hub.read(b)
  // B's agent got A's message, marked with where it came from.
  assert.match(snap.lastResponse, /^answered: \[message from tab \w+: written by that tab's agent/)
  assert.match(snap.lastResponse, /<untrusted-content nonce="[0-9a-f]{16}">\nhello from A\n<\/untrusted-content/)
  assert.match(snap.lastResponse, /hello from A\n<\/untrusted-content nonce="[0-9a-f]{16}">$/)
  await collecting
  assert.ok(events.some((e) => e.tabId === b && e.type === 'agent'))
  // The turn B ran for A's message says A started it, not the person.
  const started = (tab) => events.find((e) => e.tabId === tab && e.type === 'agent' && e.event.type === 'run_started')
  assert.deepEqual(started(a).event.origin, { kind: 'person' })
  assert.deepEqual(started(b).event.origin, { kind: 'tab', tabId: a, handle: ha })
  const session = await hub.session(b)
  assert.ok((await session.messages()).length >= 2)
  await hub.closeTab(b)
  assert.equal(hub.tab(b).open, false)
  await assert.rejects(hub.deliver(b, 'x'), (e) => e.code === 'tab_closed')
  hub.close()
})

test('deliver honours an AbortSignal: aborted before delivers nothing, aborted later cancels the turn', async () => {
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: 'slow', arguments: {} }] },
    { text: 'never' },
  ])
  const { tool } = await import('../lib/index.js')
  const slow = tool({
    name: 'slow',
    execute: (_args, { signal }) =>
      new Promise((resolve) => {
        const t = setTimeout(() => resolve('slow done'), 10_000)
        signal.addEventListener('abort', () => (clearTimeout(t), resolve('aborted')))
      }),
  })
  const hub = await TabHub.create({ provider, tools: [slow] })
  const a = await hub.openTab()
  const pre = new AbortController()
  pre.abort()
  await assert.rejects(hub.deliver(a, 'x', { signal: pre.signal }), (e) => e.code === 'cancelled')
  assert.equal(provider.callCount, 0)
  assert.equal((await (await hub.session(a)).messages()).length, 0)

  const later = new AbortController()
  const d = await hub.deliver(a, 'go', { signal: later.signal })
  assert.equal(d.status, 'started')
  setTimeout(() => later.abort(), 50)
  const o = await d.run.outcome
  assert.equal(o.status, 'cancelled')
  hub.close()
})

test("a tab's question is answered through the hub; an answer that is not text is refused and the question stays", async () => {
  const provider = ScriptedProvider.fromFn((request) => {
    const answered = request.messages.some((m) => m.role === 'tool')
    if (!answered) {
      return { toolCalls: [{ name: 'ask_clarification', arguments: { kind: 'input', question: 'Which city?' } }] }
    }
    const result = request.messages.filter((m) => m.role === 'tool').at(-1).content[0].text
    return { text: `noted: ${result}` }
  })
  const hub = await TabHub.create({ provider, clarification: true })
  const tab = await hub.openTab()
  const d = await hub.deliver(tab, 'book a hotel')
  assert.equal((await d.run.outcome).status, 'awaiting_user')
  const session = await hub.session(tab)
  const question = session.pendingClarification()
  assert.equal(question.question, 'Which city?')
  for (const bad of [undefined, null, 7]) {
    await assert.rejects(
      hub.answerClarification(tab, question.id, bad),
      (e) => e instanceof ConfigError && e.code === 'invalid_argument' && /`answer` must be a string/.test(e.message),
      String(bad),
    )
  }
  assert.equal(session.pendingClarification()?.id, question.id)
  const run = await hub.answerClarification(tab, question.id, 'Lyon')
  const outcome = await run.outcome
  assert.equal(outcome.status, 'done')
  assert.match(outcome.finalText, /Lyon/)
  hub.close()
})
