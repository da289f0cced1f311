import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ClarificationError } from '../lib/index.js'
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
