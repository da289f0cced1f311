import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ClarificationError, ConfigError } from '../lib/index.js'
import { collect, scripted } from './helpers.mjs'

test('ask_clarification parks the turn; a JS answer resumes it in a new run', async () => {
  const { agent, provider } = scripted(
    [
      { toolCalls: [{ name: 'ask_clarification', arguments: { kind: 'choice', question: 'Which size?', options: ['S', 'M', 'L'] } }] },
      { text: 'Ordering size M.' },
    ],
    { clarification: true },
  )
  assert.ok(agent.toolNames.includes('ask_clarification'))
  const s = await agent.createSession()
  const run = s.send('Order a shirt')
  const events = await collect(run)
  const pending = events.find((e) => e.type === 'clarification_pending')
  assert.ok(pending)
  const o = await run.outcome
  assert.equal(o.status, 'awaiting_user')
  const q = s.pendingClarification()
  assert.equal(q.id, pending.clarificationId)
  assert.equal(q.kind, 'choice')
  assert.deepEqual(q.options, ['S', 'M', 'L'])
  assert.throws(() => s.answerClarification(q.id, 'XXL'), (e) => e instanceof ClarificationError && e.code === 'clarification_invalid_answer')
  assert.throws(() => s.answerClarification('nope', 'S'), (e) => e.code === 'clarification_not_pending')
  for (const bad of [undefined, null, 2, ['M']]) {
    assert.throws(
      () => s.answerClarification(q.id, bad),
      (e) => e instanceof ConfigError && e.code === 'invalid_argument' && /`answer` must be a string/.test(e.message),
      String(bad),
    )
  }
  assert.equal(s.pendingClarification()?.id, q.id, 'a refused answer leaves the question pending')
  const resumed = s.answerClarification(q.id, 'M')
  const o2 = await resumed.outcome
  assert.equal(o2.status, 'done')
  assert.equal(o2.finalText, 'Ordering size M.')
  assert.equal(s.pendingClarification(), null)
  const last = provider.requests().at(-1).messages.filter((m) => m.role === 'tool').at(-1)
  assert.match(last.content[0].text, /M/)
})

test('an unanswered question expires after clarificationTtlMs', async () => {
  const { agent } = scripted(
    [{ toolCalls: [{ name: 'ask_clarification', arguments: { kind: 'confirm', question: 'Proceed?' } }] }],
    { clarification: true, config: { clarificationTtlMs: 50 } },
  )
  const s = await agent.createSession()
  assert.equal((await s.send('go').outcome).status, 'awaiting_user')
  const q = s.pendingClarification()
  await new Promise((r) => setTimeout(r, 120))
  // Expired: no longer pending, and answering is refused.
  assert.equal(s.pendingClarification(), null)
  assert.throws(
    () => s.answerClarification(q.id, 'yes'),
    (e) => e instanceof ClarificationError && ['clarification_expired', 'clarification_not_pending'].includes(e.code),
  )
})

test('dismissClarification drops the pending question without a turn; the model reads it next time', async () => {
  const seen = []
  const { agent, provider } = scripted(
    [
      { toolCalls: [{ name: 'ask_clarification', arguments: { kind: 'confirm', question: 'Delete the draft?' } }] },
      { text: 'Understood, I will leave the draft alone.' },
    ],
    { clarification: true, onEvent: (e) => seen.push(e.type) },
  )
  const s = await agent.createSession()
  assert.equal((await s.send('Tidy up').outcome).status, 'awaiting_user')
  const q = s.pendingClarification()
  assert.ok(q)
  const calls = provider.callCount
  await s.dismissClarification(q.id)
  assert.equal(s.pendingClarification(), null)
  assert.ok(seen.includes('clarification_dismissed'))
  // No turn started.
  assert.equal(provider.callCount, calls)
  await assert.rejects(s.dismissClarification(q.id), (e) => e instanceof ClarificationError && e.code === 'clarification_not_pending')
  assert.throws(() => s.answerClarification(q.id, 'yes'), (e) => e.code === 'clarification_not_pending')
  // The next turn's request carries the dismissal as the parked call's result.
  const o = await s.send('Never mind').outcome
  assert.equal(o.finalText, 'Understood, I will leave the draft alone.')
  const results = provider.requests().at(-1).messages.filter((m) => m.role === 'tool')
  assert.match(results.at(-1).content[0].text, /dismiss/i)
})

test('a tab hub answers and dismisses a tab\'s question; a dismissal lets held messages start a turn', async () => {
  const { ScriptedProvider, TabHub } = await import('../lib/index.js')
  const provider = ScriptedProvider.fromFn((request) => {
    const user = request.messages.filter((m) => m.role === 'user').at(-1).content[0].text
    const last = request.messages.at(-1)
    if (last.role === 'user' && user.includes('ask me')) {
      return { toolCalls: [{ name: 'ask_clarification', arguments: { kind: 'choice', question: 'Which?', options: ['red', 'blue'] } }] }
    }
    if (last.role === 'tool') return { text: `got: ${last.content[0].text}` }
    return { text: `answered: ${user}` }
  })
  const hub = await TabHub.create({ provider, clarification: true })
  const tab = await hub.openTab()
  const session = await hub.session(tab)

  // Answer through the hub: the turn goes on in the returned run.
  assert.equal((await (await hub.deliver(tab, 'ask me')).run.outcome).status, 'awaiting_user')
  let q = session.pendingClarification()
  await assert.rejects(hub.answerClarification(tab, q.id, 'green'), (e) => e instanceof ClarificationError && e.code === 'clarification_invalid_answer')
  const resumed = await hub.answerClarification(tab, q.id, 'blue')
  const o = await resumed.outcome
  assert.equal(o.status, 'done')
  assert.match(o.finalText, /blue/)
  await hub.waitIdle(tab)

  // Dismiss through the hub: an agent's message held for the person then starts a turn.
  assert.equal((await (await hub.deliver(tab, 'ask me again')).run.outcome).status, 'awaiting_user')
  q = session.pendingClarification()
  const held = await hub.deliver(tab, 'a note from another tab', { origin: 'agent' })
  assert.equal(held.status, 'held')
  assert.equal(held.awaitingUser, true)
  await hub.dismissClarification(tab, q.id)
  assert.equal(session.pendingClarification(), null)
  await hub.waitIdle(tab)
  assert.match((await hub.read(tab)).lastResponse, /answered: .*a note from another tab/s)
  await assert.rejects(hub.dismissClarification(tab, q.id), (e) => e instanceof ClarificationError && e.code === 'clarification_not_pending')
  hub.close()
})
