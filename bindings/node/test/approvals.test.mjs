// Durable approvals: a gate that answers 'ask' parks the turn (awaiting_approval); approve,
// reject with a reason, edited arguments (invalid and valid), remembered decisions, expiry, a
// new message, dismissal, the tab hub, and a process killed while parked.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, appendFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, ApprovalError, ScriptedProvider, SqliteStore, TabHub, tool } from '../lib/index.js'
import { collect, sleep, until } from './helpers.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

/** A gated `pay` tool that records each payment in `paid`. */
function payTool(paid) {
  return tool({
    name: 'pay',
    description: 'Pays.',
    gated: true,
    parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
    execute: ({ amount }) => {
      paid.push(amount)
      return `paid ${amount}`
    },
  })
}

const payStep = (amount) => ({ text: 'I will pay.', toolCalls: [{ name: 'pay', arguments: { amount } }] })

/** An agent whose gate asks the person about every `pay`. */
function fixture(steps, options = {}) {
  const paid = []
  const events = []
  const asked = []
  const provider = new ScriptedProvider(steps)
  const agent = new Agent({
    provider,
    tools: [payTool(paid)],
    gate: (req) => (asked.push(req), { decision: 'ask', prompt: 'Pay this?' }),
    onEvent: (e) => events.push(e),
    ...options,
  })
  return { agent, provider, paid, events, asked }
}

test("a gate's 'ask' parks the turn; approving runs the call once in a new run", async () => {
  const { agent, provider, paid } = fixture([payStep(500), { text: 'Paid.' }])
  const s = await agent.createSession()
  const run = s.send('pay the bill')
  const events = await collect(run)
  const o = await run.outcome
  assert.equal(o.status, 'awaiting_approval')
  assert.equal(run.status().state, 'awaiting_approval')
  assert.deepEqual(paid, [], 'nothing runs before the person answers')
  const a = o.approval
  assert.equal(a.calls.length, 1)
  assert.deepEqual(Object.keys(a.calls[0]).sort(), ['arguments', 'callId', 'prompt', 'tool'])
  assert.equal(a.calls[0].tool, 'pay')
  assert.deepEqual(a.calls[0].arguments, { amount: 500 })
  assert.equal(a.calls[0].prompt, 'Pay this?')
  assert.equal(a.message, 'I will pay.')
  assert.deepEqual(a.origin, { kind: 'person' })
  assert.ok(a.expiresAtMs - a.askedAtMs === 30 * 60 * 1000, 'the default ttl is 30 minutes')
  assert.deepEqual(s.pendingApproval(), a)
  const pending = events.find((e) => e.type === 'approval_pending')
  assert.equal(pending.approvalId, a.id)
  assert.deepEqual(pending.approval, a)
  await assert.rejects(run.result(), (e) => e.code === 'awaiting_approval')

  const callId = a.calls[0].callId
  const resumed = s.resolveApproval(a.id, { [callId]: 'approve' })
  const resumedEvents = await collect(resumed)
  const done = await resumed.outcome
  assert.equal(done.status, 'done', done.error)
  assert.equal(done.finalText, 'Paid.')
  assert.deepEqual(paid, [500])
  const resolved = resumedEvents.find((e) => e.type === 'approval_resolved')
  assert.equal(resolved.resolution, 'answered')
  // Keyed by the call id as it is (not camelCased).
  assert.deepEqual(resolved.decisions, { [callId]: { decision: 'approve' } })
  assert.equal(s.pendingApproval(), null)
  // Answered once: a second answer is refused.
  assert.throws(
    () => s.resolveApproval(a.id, { [callId]: 'approve' }),
    (e) => e instanceof ApprovalError && e.code === 'approval_not_pending',
  )
  assert.equal(provider.callCount, 2)
})

test('a rejection with a reason is read by the model and the turn goes on', async () => {
  const { agent, provider, paid } = fixture([payStep(500), { text: 'Understood.' }])
  const s = await agent.createSession()
  const a = (await s.send('pay').outcome).approval
  const o = await s.resolveApproval(a.id, { [a.calls[0].callId]: { decision: 'reject', reason: 'too expensive' } }).outcome
  assert.equal(o.status, 'done')
  assert.deepEqual(paid, [])
  const last = provider.requests().at(-1).messages.at(-1)
  assert.equal(last.role, 'tool')
  assert.match(last.content[0].text, /rejected it: too expensive/)
})

test('edited arguments are checked against the schema (refused, still pending) and used', async () => {
  const { agent, paid } = fixture([payStep(500), { text: 'Paid less.' }])
  const s = await agent.createSession()
  const a = (await s.send('pay').outcome).approval
  const callId = a.calls[0].callId
  assert.throws(
    () => s.resolveApproval(a.id, { [callId]: { decision: 'approve', arguments: { amount: 'lots' } } }),
    (e) => e instanceof ApprovalError && e.code === 'approval_invalid_arguments' && /amount/.test(e.message),
  )
  assert.notEqual(s.pendingApproval(), null, 'still pending after a refused edit')
  assert.throws(() => s.resolveApproval(a.id, {}), (e) => e instanceof ApprovalError && e.code === 'approval_missing_decision')
  assert.throws(
    () => s.resolveApproval(a.id, { [callId]: 'approve', nope: 'approve' }),
    (e) => e instanceof ApprovalError && e.code === 'approval_unknown_call',
  )
  // Malformed decisions are refused before they reach the session.
  for (const bad of [null, [], { [callId]: 'maybe' }, { [callId]: { decision: 'approve', reason: 'x' } }, { [callId]: { decision: 'reject', remember: 'forever' } }]) {
    assert.throws(() => s.resolveApproval(a.id, bad), (e) => e.code === 'invalid_argument', JSON.stringify(bad))
  }
  const o = await s.resolveApproval(a.id, { [callId]: { decision: 'approve', arguments: { amount: 200 } } }).outcome
  assert.equal(o.status, 'done', o.error)
  assert.deepEqual(paid, [200])
})

test("remember 'session' answers later calls; approvalRules lists it; revoked, the person is asked again", async () => {
  const { agent, paid, asked } = fixture([payStep(1), { text: 'ok' }, payStep(2), { text: 'ok again' }, payStep(3)])
  const s = await agent.createSession()
  const a = (await s.send('pay 1').outcome).approval
  await s.resolveApproval(a.id, { [a.calls[0].callId]: { decision: 'approve', remember: 'session' } }).outcome
  const rules = await agent.approvalRules()
  assert.equal(rules.length, 1)
  assert.deepEqual(Object.keys(rules[0]).sort(), ['allow', 'createdAtMs', 'id', 'sessionId', 'tool'])
  assert.equal(rules[0].tool, 'pay')
  assert.equal(rules[0].sessionId, s.id)
  assert.equal(rules[0].allow, true)

  const o = await s.send('pay 2').outcome
  assert.equal(o.status, 'done', 'the remembered approval answers')
  assert.deepEqual(paid, [1, 2])
  assert.equal(asked.length, 2, 'the gate still asks; the rule answers for the person')

  assert.equal(await agent.revokeApprovalRule(rules[0].id), true)
  await assert.rejects(
    agent.revokeApprovalRule(rules[0]),
    (e) => e.code === 'invalid_argument' && /revokeApprovalRule: `id` must be a string, not object/.test(e.message),
  )
  assert.equal(await agent.revokeApprovalRule(rules[0].id), false)
  assert.deepEqual(await agent.approvalRules(), [])
  assert.equal((await s.send('pay 3').outcome).status, 'awaiting_approval')
})

test('an unanswered approval expires after approvalTtlMs; its call never runs', async () => {
  const { agent, paid, events } = fixture([payStep(5), { text: 'next' }], { config: { approvalTtlMs: 50 } })
  const s = await agent.createSession()
  const a = (await s.send('pay').outcome).approval
  assert.equal(a.expiresAtMs - a.askedAtMs, 50)
  await until(() => events.some((e) => e.type === 'approval_expired'))
  assert.equal(events.find((e) => e.type === 'approval_expired').approvalId, a.id)
  assert.equal(s.pendingApproval(), null)
  assert.throws(
    () => s.resolveApproval(a.id, { [a.calls[0].callId]: 'approve' }),
    (e) => e instanceof ApprovalError && ['approval_expired', 'approval_not_pending'].includes(e.code),
  )
  assert.deepEqual(paid, [])
})

test('a new message dismisses the pending approval; dismissApproval does too, without a turn', async () => {
  const { agent, provider, paid, events } = fixture([payStep(5), { text: 'Okay, not paying.' }, payStep(6)])
  const s = await agent.createSession()
  const first = (await s.send('pay').outcome).approval
  const run = s.send('never mind')
  const runEvents = await collect(run)
  assert.equal((await run.outcome).status, 'done')
  assert.equal(s.pendingApproval(), null)
  const resolved = runEvents.find((e) => e.type === 'approval_resolved')
  assert.equal(resolved.approvalId, first.id)
  assert.equal(resolved.resolution, 'dismissed')
  assert.match(resolved.decisions.reason, /new message/)
  assert.match(provider.requests().at(-1).messages.filter((m) => m.role === 'tool').at(-1).content[0].text, /new message/)

  const second = (await s.send('pay again').outcome).approval
  const calls = provider.callCount
  await s.dismissApproval(second.id)
  assert.equal(s.pendingApproval(), null)
  assert.equal(provider.callCount, calls, 'no turn starts')
  await until(() => events.some((e) => e.type === 'approval_resolved' && e.approvalId === second.id && e.resolution === 'dismissed'))
  await assert.rejects(s.dismissApproval(second.id), (e) => e instanceof ApprovalError && e.code === 'approval_not_pending')
  assert.deepEqual(paid, [])
})

test("the gate's answers: 'ask' without a prompt, and the other answers unchanged", async () => {
  const paid = []
  const agent = new Agent({
    provider: new ScriptedProvider([payStep(1), payStep(2), { text: 'ok' }]),
    tools: [payTool(paid)],
    gate: (req) => (req.arguments.amount === 1 ? 'ask' : Promise.resolve({ decision: 'allow' })),
  })
  const s = await agent.createSession()
  const o = await s.send('pay').outcome
  assert.equal(o.status, 'awaiting_approval')
  assert.equal('prompt' in o.approval.calls[0], false)
  const done = await s.resolveApproval(o.approval.id, { [o.approval.calls[0].callId]: 'approve' }).outcome
  assert.equal(done.status, 'done', done.error)
  assert.deepEqual(paid, [1, 2])
})

test('a tab hub resolves and dismisses a tab\'s approval', async () => {
  const paid = []
  const provider = ScriptedProvider.fromFn((request) => {
    const last = request.messages.at(-1)
    if (last.role === 'user' && last.content[0].text === 'pay') return payStep(9)
    if (last.role === 'tool') return { text: `after: ${last.content[0].text}` }
    return { text: `got: ${last.content[0].text}` }
  })
  const hub = await TabHub.create({ provider, tools: [payTool(paid)], gate: () => 'ask' })
  const tab = await hub.openTab()
  const session = await hub.session(tab)
  assert.equal((await (await hub.deliver(tab, 'pay')).run.outcome).status, 'awaiting_approval')
  let a = session.pendingApproval()
  await assert.rejects(hub.resolveApproval(tab, a.id, {}), (e) => e instanceof ApprovalError && e.code === 'approval_missing_decision')
  const run = await hub.resolveApproval(tab, a.id, { [a.calls[0].callId]: 'approve' })
  const o = await run.outcome
  assert.equal(o.status, 'done', o.error)
  assert.equal(o.finalText, 'after: paid 9')
  assert.deepEqual(paid, [9])
  await hub.waitIdle(tab)

  assert.equal((await (await hub.deliver(tab, 'pay')).run.outcome).status, 'awaiting_approval')
  a = session.pendingApproval()
  const held = await hub.deliver(tab, 'a note from another tab', { origin: 'agent' })
  assert.equal(held.status, 'held')
  await hub.dismissApproval(tab, a.id)
  assert.equal(session.pendingApproval(), null)
  await hub.waitIdle(tab)
  assert.match((await hub.read(tab)).lastResponse, /got: .*a note from another tab/s)
  await assert.rejects(hub.dismissApproval(tab, a.id), (e) => e instanceof ApprovalError && e.code === 'approval_not_pending')
  assert.deepEqual(paid, [9])
  hub.close()
})

test('parked, the process killed (SIGKILL), reopened and approved: the tool runs exactly once', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-core-approval-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const db = path.join(dir, 'sessions.db')
  const ledger = path.join(dir, 'ledger.txt')

  // The first process parks the turn, says where, and waits.
  const child = spawn(process.execPath, [path.join(here, 'fixtures', 'approval-child.mjs'), db, ledger], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  await Promise.race([
    until(() => stdout.includes('\n'), 30_000),
    exited.then(({ code }) => {
      throw new Error(`the first process exited (${code}) before parking: ${stderr}`)
    }),
  ])
  const parked = JSON.parse(stdout.trim())
  assert.equal(parked.status, 'awaiting_approval', stderr)
  child.kill('SIGKILL')
  assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' })
  assert.equal(existsSync(ledger), false, 'the first process did not pay')

  // A new process (this one) opens the same store with an agent whose tool pays to the same file.
  const pay = tool({
    name: 'pay',
    gated: true,
    parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
    execute: ({ amount }) => {
      appendFileSync(ledger, `paid ${amount}\n`)
      return `paid ${amount}`
    },
  })
  const store = await SqliteStore.open(db)
  const agent = new Agent({
    provider: new ScriptedProvider([{ text: 'Paid after the restart.' }]),
    store,
    tools: [pay],
    gate: () => 'ask',
  })
  const s = await agent.openSession(parked.sessionId)
  const a = s.pendingApproval()
  assert.ok(a, 'the approval survived the kill')
  assert.equal(a.id, parked.approvalId)
  assert.equal(a.calls[0].prompt, 'Pay the bill?')
  assert.deepEqual(a.calls[0].arguments, { amount: 700 })
  const o = await s.resolveApproval(a.id, { [a.calls[0].callId]: 'approve' }).outcome
  assert.equal(o.status, 'done', o.error)
  assert.equal(o.finalText, 'Paid after the restart.')
  assert.equal(readFileSync(ledger, 'utf8'), 'paid 700\n')

  // Reopened once more: nothing pending, nothing run again.
  const again = await agent.openSession(parked.sessionId)
  assert.equal(again.pendingApproval(), null)
  await sleep(20)
  assert.equal(readFileSync(ledger, 'utf8'), 'paid 700\n')
  agent.close()
})

test('every asked call of a message is answered at once; the gate is asked once per call', async () => {
  const paid = []
  const asked = []
  const provider = new ScriptedProvider([
    { text: 'Paying.', toolCalls: [20, 5, 30].map((amount) => ({ name: 'pay', arguments: { amount } })) },
    { text: 'done' },
  ])
  const agent = new Agent({
    provider,
    tools: [payTool(paid)],
    gate: (req) => (asked.push(req.arguments.amount), req.arguments.amount < 10 ? 'allow' : 'ask'),
  })
  const s = await agent.createSession()
  let o = await s.send('pay').outcome
  assert.equal(o.status, 'awaiting_approval')
  assert.deepEqual(o.approval.calls.map((c) => c.arguments.amount), [20, 30])
  const [first, second] = o.approval.calls.map((c) => c.callId)
  o = await s.resolveApproval(o.approval.id, { [first]: 'approve', [second]: { decision: 'reject', reason: 'no' } }).outcome
  assert.equal(o.status, 'done')
  assert.deepEqual(paid, [20, 5])
  assert.deepEqual(asked, [20, 5, 30])
})
