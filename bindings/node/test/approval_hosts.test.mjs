// Decisions remembered for a host pattern: the page tools name their tab's host (from the
// host's tabs()), the gate and the parked call carry it, `remember: { host }` answers later
// calls on matching hosts only, a pattern that does not fit the call is refused, and an
// approved call does not run once the tab has moved to another host.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, ApprovalError, ConfigError, ScriptedProvider, pageTools } from '../lib/index.js'
import { collect } from './helpers.mjs'

/** A browser with one tab whose address the test sets; navigating leaves it there. */
function site(url) {
  const s = {
    url,
    navigated: [],
    evaluate: (expression) => (expression === 'location.href' ? s.url : { ok: true }),
    navigate: (to) => void s.navigated.push(to),
    waitSettled: () => {},
    tabs: () => [{ id: 't1', url: s.url, title: '', active: true }],
    openTab: () => {
      throw new Error('one tab only')
    },
    closeTab: () => {},
    activateTab: () => {},
  }
  return s
}

function fixture(url) {
  const page = site(url)
  const hosts = []
  const provider = ScriptedProvider.fromFn((request) =>
    request.messages.at(-1).role === 'user'
      ? { text: 'Going.', toolCalls: [{ name: 'page_navigate', arguments: { url: 'https://shop.example.com/next' } }] }
      : { text: 'done' },
  )
  const agent = new Agent({
    provider,
    tools: [pageTools(page, { settleTimeoutMs: 500 })],
    gate: (req) => (hosts.push(req.host), 'ask'),
  })
  return { page, hosts, agent }
}

test('a host rule answers on matching hosts only; a pattern that does not fit is refused', async () => {
  const { page, hosts, agent } = fixture('https://Shop.Example.com/cart')
  const s = await agent.createSession()
  const approval = (await s.send('go').outcome).approval
  const [call] = approval.calls
  assert.equal(call.host, 'shop.example.com')
  assert.deepEqual(hosts, ['shop.example.com'])

  assert.throws(
    () => s.resolveApproval(approval.id, { [call.callId]: { decision: 'approve', remember: { host: 'other.org' } } }),
    (e) => e instanceof ApprovalError && e.code === 'approval_invalid_remember' && /does not match/.test(e.message),
  )
  assert.throws(
    () => s.resolveApproval(approval.id, { [call.callId]: { decision: 'approve', remember: { hosts: 'x' } } }),
    ConfigError,
  )
  const remember = { decision: 'approve', remember: { host: '*.example.com' } }
  assert.equal((await s.resolveApproval(approval.id, { [call.callId]: remember }).outcome).status, 'done')
  const [rule] = await agent.approvalRules()
  assert.equal(rule.hostPattern, '*.example.com')
  assert.equal(rule.sessionId, undefined)

  page.url = 'https://www.example.com/'
  assert.equal((await s.send('again').outcome).status, 'done')
  page.url = 'https://example.org/'
  const o = await s.send('elsewhere').outcome
  assert.equal(o.status, 'awaiting_approval')
  assert.equal(o.approval.calls[0].host, 'example.org')
  assert.equal(page.navigated.length, 2)
})

test('an approved call does not run once the tab has moved to another host', async () => {
  const { page, agent } = fixture('https://bank.example/')
  const s = await agent.createSession()
  const approval = (await s.send('go').outcome).approval
  page.url = 'https://evil.test/'
  const run = s.resolveApproval(approval.id, { [approval.calls[0].callId]: 'approve' })
  const events = await collect(run)
  assert.equal((await run.outcome).status, 'done')
  assert.deepEqual(page.navigated, [])
  const denied = events.find((e) => e.type === 'tool_call_denied')
  assert.match(denied.reason, /bank\.example.*evil\.test/)
})
