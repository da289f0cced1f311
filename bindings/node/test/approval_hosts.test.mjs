// Decisions remembered for a host pattern: the page tools name the host they act on (their
// tab's, from the host's tabs(); a navigation's destination), the gate and the parked call carry it, `remember: { host }` answers later
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
    scripts: [],
    evaluate: (expression) => {
      if (expression === 'location.href') return s.url
      s.scripts.push(expression)
      return { ok: true }
    },
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

/** Calls `tool` (the message's text when empty) on each user message (`args` made from its text), then answers. */
function onEachMessage(tool, args) {
  return ScriptedProvider.fromFn((request) => {
    const last = request.messages.at(-1)
    const text = last.content[0]?.text ?? ''
    return last.role === 'user'
      ? { text: 'Going.', toolCalls: [{ name: tool || text, arguments: args(text) }] }
      : { text: 'done' }
  })
}

function fixture(url, provider) {
  const page = site(url)
  const hosts = []
  const agent = new Agent({
    provider,
    tools: [pageTools(page, { settleTimeoutMs: 500 })],
    gate: (req) => (hosts.push(req.host), 'ask'),
  })
  return { page, hosts, agent }
}

test('a host rule answers on matching hosts only; a pattern that does not fit is refused', async () => {
  // A navigation acts on the host it goes to (the message's address here), not the tab's.
  const navigate = onEachMessage('page_navigate', (url) => ({ url }))
  const { page, hosts, agent } = fixture('https://tab.example.org/', navigate)
  const s = await agent.createSession()
  const approval = (await s.send('https://Shop.Example.com/next').outcome).approval
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

  assert.equal((await s.send('https://www.example.com/').outcome).status, 'done')
  const o = await s.send('https://example.org/').outcome
  assert.equal(o.status, 'awaiting_approval')
  assert.equal(o.approval.calls[0].host, 'example.org')
  assert.equal(page.navigated.length, 2)
})

test('an approved call does not run once the tab has moved to another host', async () => {
  const fill = onEachMessage('page_fill', (text) => ({ selector: '#q', text }))
  const { page, agent } = fixture('https://bank.example/', fill)
  const s = await agent.createSession()
  const approval = (await s.send('pay').outcome).approval
  assert.equal(approval.calls[0].host, 'bank.example')
  page.url = 'https://evil.test/'
  const run = s.resolveApproval(approval.id, { [approval.calls[0].callId]: 'approve' })
  const events = await collect(run)
  assert.equal((await run.outcome).status, 'done')
  assert.deepEqual(page.scripts, [], 'nothing ran on the page')
  const denied = events.find((e) => e.type === 'tool_call_denied')
  assert.match(denied.reason, /bank\.example.*evil\.test/)
})

test('back and forward are decided for the host of the history entry they go to', async () => {
  const page = site('https://shop.example.com/cart')
  const entries = ['https://evil.test/', 'https://shop.example.com/cart', 'https://www.example.com/']
  page.history = () => ({ entries, current: 1 })
  const hosts = []
  const agent = new Agent({
    provider: onEachMessage('', () => ({})),
    tools: [pageTools(page, { settleTimeoutMs: 500 })],
    gate: (req) => (hosts.push(req.host), 'ask'),
  })
  const s = await agent.createSession()
  assert.equal((await s.send('page_back').outcome).approval.calls[0].host, 'evil.test')
  assert.equal((await s.send('page_forward').outcome).approval.calls[0].host, 'www.example.com')
  assert.deepEqual(hosts, ['evil.test', 'www.example.com'])
})
