// Lifecycle hooks from JavaScript (`new Agent({ hooks })`): redaction before each model call,
// an edited answer, tool calls denied and rewritten, results rewritten, order, failures, the
// turn's end; sync and async methods.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, ConfigError, FatalToolError, RunError, ScriptedProvider, TabHub, tool } from '../lib/index.js'
import { echo, scripted, sleep, toolResults } from './helpers.mjs'

const SECRET = 'sk-SECRET-1234'
const callEcho = (text) => ({ toolCalls: [{ name: 'echo', arguments: { text } }] })

/** A request with every occurrence of the secret replaced. */
const redact = (request) => JSON.parse(JSON.stringify(request).replaceAll(SECRET, '[redacted]'))

test('a redacting beforeModelCall keeps the secret out of every request the model gets', async () => {
  const seen = []
  const { agent, provider } = scripted([callEcho(`the key is ${SECRET}`), { text: 'noted' }], {
    tools: [echo],
    hooks: [
      {
        beforeModelCall(sessionId, request) {
          seen.push(sessionId)
          return redact(request)
        },
      },
    ],
  })
  const s = await agent.createSession()
  const o = await s.send(`remember ${SECRET}`).outcome
  assert.equal(o.status, 'done')
  const requests = provider.requests()
  assert.equal(requests.length, 2)
  assert.ok(!JSON.stringify(requests).includes(SECRET), JSON.stringify(requests))
  assert.ok(JSON.stringify(requests).includes('[redacted]'))
  assert.deepEqual(seen, [s.id, s.id])
  // The conversation itself is kept as it was: only what is sent is redacted.
  assert.ok(JSON.stringify(await s.messages()).includes(SECRET))
})

test('afterModelCall edits the answer; returning undefined or null keeps it', async () => {
  const { agent } = scripted(['the model said this'], {
    hooks: [
      { afterModelCall: () => undefined },
      { afterModelCall: async () => null },
      {
        afterModelCall(_sessionId, response) {
          assert.equal(response.finishReason, 'stop')
          return { ...response, message: { ...response.message, content: [{ type: 'text', text: 'the host says this' }] } }
        },
      },
    ],
  })
  const s = await agent.createSession()
  const o = await s.send('hi').outcome
  assert.equal(o.finalText, 'the host says this')
  const stored = await s.messages()
  assert.equal(stored.at(-1).message.content[0].text, 'the host says this')
})

test('beforeToolCall: a denial the model reads, and the tool never runs', async () => {
  let ran = 0
  const counted = tool({ ...echo, name: 'counted', execute: () => (ran++, 'ran') })
  const calls = []
  const { agent, provider } = scripted([{ toolCalls: [{ name: 'counted', arguments: { text: 'x' } }] }, { text: 'ok' }], {
    tools: [counted],
    hooks: [{ beforeToolCall: (call) => (calls.push(call), { deny: 'not on weekends' }) }],
  })
  const s = await agent.createSession()
  const o = await s.send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(ran, 0)
  const [result] = toolResults(provider)
  assert.equal(result.isError, true)
  assert.match(result.content[0].text, /denied by the host: not on weekends/)
  assert.equal(calls.length, 1)
  assert.equal(calls[0].sessionId, s.id)
  assert.equal(calls[0].tool, 'counted')
  assert.equal(typeof calls[0].callId, 'string')
  assert.deepEqual(calls[0].arguments, { text: 'x' })
  assert.deepEqual(calls[0].origin, { kind: 'person' })
})

test('beforeToolCall: rewritten arguments reach the tool; a rewrite the schema refuses does not run', async () => {
  const got = []
  const recording = tool({ ...echo, execute: ({ text }) => (got.push(text), `echo: ${text}`) })
  const { agent, provider } = scripted([callEcho('original'), { text: 'ok' }], {
    tools: [recording],
    hooks: [{ beforeToolCall: () => ({ arguments: { text: 'rewritten' } }) }],
  })
  assert.equal((await (await agent.createSession()).send('go').outcome).status, 'done')
  assert.deepEqual(got, ['rewritten'])
  assert.equal(toolResults(provider)[0].content[0].text, 'echo: rewritten')

  got.length = 0
  const bad = scripted([callEcho('original'), { text: 'ok' }], {
    tools: [recording],
    hooks: [{ beforeToolCall: () => ({ arguments: { text: 5 } }) }],
  })
  assert.equal((await (await bad.agent.createSession()).send('go').outcome).status, 'done')
  assert.deepEqual(got, [])
  const [refused] = toolResults(bad.provider)
  assert.equal(refused.isError, true)
  assert.match(refused.content[0].text, /rewrote the arguments of echo into ones its schema refuses/)
})

test('beforeToolCall: anything but undefined, true, { deny } or { arguments } is a hook failure', async () => {
  for (const answer of ['allow', false, { deny: 3 }, { arguments: [1] }, { deny: 'x', arguments: {} }, () => true]) {
    const { agent } = scripted([callEcho('x'), { text: 'ok' }], { tools: [echo], hooks: [{ beforeToolCall: () => answer }] })
    const o = await (await agent.createSession()).send('go').outcome
    assert.equal(o.status, 'error', String(answer))
    assert.equal(o.errorKind, 'hook')
    assert.match(o.error, /^the host's before_tool_call hook failed: beforeToolCall returned /)
  }
  for (const answer of [undefined, true, null]) {
    const { agent } = scripted([callEcho('x'), { text: 'ok' }], { tools: [echo], hooks: [{ beforeToolCall: () => answer }] })
    assert.equal((await (await agent.createSession()).send('go').outcome).status, 'done', String(answer))
  }
})

test('afterToolCall sees the call and the result, and may rewrite it', async () => {
  const seen = []
  const { agent, provider } = scripted([callEcho(SECRET), callEcho('fail please'), { text: 'ok' }], {
    tools: [echo],
    hooks: [
      {
        afterToolCall(call, result) {
          seen.push({ call, result })
          if (call.arguments.text === SECRET) {
            return { ...result, content: result.content.map((p) => ({ ...p, text: p.text.replaceAll(SECRET, '***') })) }
          }
          return { ok: false, error: 'the host refused this result' }
        },
      },
    ],
  })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(seen.length, 2)
  assert.equal(seen[0].call.tool, 'echo')
  assert.deepEqual(seen[0].result, { ok: true, content: [{ type: 'text', text: `echo: ${SECRET}` }], truncated: false })
  const results = toolResults(provider)
  assert.equal(results[0].content[0].text, 'echo: ***')
  assert.equal(results[1].isError, true)
  assert.match(results[1].content[0].text, /the host refused this result/)
  assert.ok(!JSON.stringify(provider.requests()).includes(`echo: ${SECRET}`))
})

test('afterToolCall: an invalid replacement is a hook failure naming the shapes', async () => {
  const { agent } = scripted([callEcho('x'), { text: 'ok' }], { tools: [echo], hooks: [{ afterToolCall: () => ({ ok: true }) }] })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.errorKind, 'hook')
  assert.match(o.error, /after_tool_call hook failed: afterToolCall returned an invalid result \(no content\)/)
})

test('hooks run in the order given; a rewrite is what the next hook sees', async () => {
  const log = []
  const tag = (name) => ({
    beforeModelCall: () => void log.push(`${name}:model`),
    beforeToolCall(call) {
      log.push(`${name}:tool:${call.arguments.text}`)
      return { arguments: { text: `${call.arguments.text}+${name}` } }
    },
    afterToolCall: (_call, result) => void log.push(`${name}:result:${result.content[0].text}`),
    turnEnded: (_id, outcome) => void log.push(`${name}:end:${outcome.status}`),
  })
  const { agent } = scripted([callEcho('x'), { text: 'ok' }], { tools: [echo], hooks: [tag('first'), tag('second')] })
  assert.equal((await (await agent.createSession()).send('go').outcome).status, 'done')
  assert.deepEqual(log, [
    'first:model',
    'second:model',
    'first:tool:x',
    'second:tool:x+first',
    'first:result:echo: x+first+second',
    'second:result:echo: x+first+second',
    'first:model',
    'second:model',
    'first:end:done',
    'second:end:done',
  ])
})

test('a hook that throws or rejects ends the run with errorKind hook and its message', async () => {
  const cases = [
    [{ beforeModelCall: () => { throw new Error('boom') } }, "the host's before_model_call hook failed: boom"],
    [{ afterModelCall: async () => { throw new Error('late boom') } }, "the host's after_model_call hook failed: late boom"],
    [{ beforeToolCall: () => Promise.reject(new Error('policy server down')) }, "the host's before_tool_call hook failed: policy server down"],
    [{ afterToolCall: () => { throw 'a string' } }, "the host's after_tool_call hook failed: a string"],
    [{ turnEnded: async () => { await sleep(1); throw new Error('audit log unavailable') } }, "the host's turn_ended hook failed: audit log unavailable"],
  ]
  for (const [hook, message] of cases) {
    const { agent } = scripted([callEcho('x'), { text: 'ok' }], { tools: [echo], hooks: [hook] })
    const run = (await agent.createSession()).send('go')
    const o = await run.outcome
    assert.equal(o.status, 'error', message)
    assert.equal(o.errorKind, 'hook')
    assert.equal(o.error.split('\n')[0].slice(0, message.length), message)
    await assert.rejects(run.result(), (e) => e instanceof RunError && e.code === 'hook')
  }
})

test('turnEnded sees the outcome; what it returns is ignored', async () => {
  const ended = []
  const { agent } = scripted(['all done'], {
    hooks: [{ turnEnded: (sessionId, outcome) => (ended.push({ sessionId, outcome }), { ignored: () => 1 }) }],
  })
  const s = await agent.createSession()
  const o = await s.send('hi').outcome
  assert.equal(o.status, 'done')
  assert.equal(ended.length, 1)
  assert.equal(ended[0].sessionId, s.id)
  assert.equal(ended[0].outcome.status, 'done')
  assert.equal(ended[0].outcome.finalText, 'all done')
  assert.equal(ended[0].outcome.errorKind, null)
})

test('async hooks at every point, methods called on their object', async () => {
  class Policy {
    constructor() {
      this.log = []
    }
    async beforeModelCall(_id, request) {
      await sleep(2)
      this.log.push('beforeModelCall')
      return { ...request, system: 'be terse' }
    }
    async afterModelCall(_id, response) {
      await sleep(2)
      this.log.push('afterModelCall')
    }
    async beforeToolCall() {
      await sleep(2)
      this.log.push('beforeToolCall')
      return { arguments: { text: 'async' } }
    }
    async afterToolCall(_call, result) {
      await sleep(2)
      this.log.push('afterToolCall')
      return { ok: true, content: [{ type: 'text', text: `${result.content[0].text}!` }], structured: { n: 1 } }
    }
    async turnEnded() {
      await sleep(2)
      this.log.push('turnEnded')
    }
  }
  const policy = new Policy()
  const { agent, provider } = scripted([callEcho('x'), { text: 'ok' }], { tools: [echo], hooks: [policy] })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(toolResults(provider)[0].content[0].text, 'echo: async!')
  assert.ok(provider.requests().every((r) => r.system === 'be terse'))
  assert.deepEqual(policy.log, [
    'beforeModelCall',
    'afterModelCall',
    'beforeToolCall',
    'afterToolCall',
    'beforeModelCall',
    'afterModelCall',
    'turnEnded',
  ])
})

test('hooks options are checked when the agent is made', () => {
  const provider = new ScriptedProvider([])
  for (const [hooks, pattern] of [
    [{}, /`hooks` must be an array/],
    [[null], /hooks\[0\] must be an object/],
    [[{ beforeModelCall: 'yes' }], /hooks\[0\]\.beforeModelCall must be a function/],
    [[{ beforeModelcall() {} }], /hooks\[0\] has none of the hook methods/],
  ]) {
    assert.throws(() => new Agent({ provider, hooks }), (e) => e instanceof ConfigError && pattern.test(e.message))
  }
})

test("a tab hub's agents run the hooks too", async () => {
  const ended = []
  const hub = await TabHub.create({ provider: new ScriptedProvider(['from the tab']), hooks: [{ turnEnded: (_id, o) => void ended.push(o.finalText) }] })
  const tab = await hub.openTab()
  const d = await hub.deliver(tab, 'hi')
  assert.equal((await d.run.outcome).status, 'done')
  assert.deepEqual(ended, ['from the tab'])
  hub.close()
})

test('a fatal tool error stays fatal through afterToolCall, its cause kept', async () => {
  const boom = new FatalToolError('the host is gone')
  const fatal = tool({ ...echo, name: 'fatal', execute: () => { throw boom } })
  const seen = []
  const { agent } = scripted([{ toolCalls: [{ name: 'fatal', arguments: { text: 'x' } }] }, { text: 'never' }], {
    tools: [fatal],
    hooks: [{ afterToolCall: (_call, result) => void seen.push(result) }],
  })
  const o = await (await agent.createSession()).send('go').outcome
  assert.deepEqual(seen, [{ ok: false, error: 'the host is gone', fatal: true }])
  assert.equal(o.status, 'error')
  assert.equal(o.errorKind, 'tool.fatal')
  assert.equal(o.cause, boom)
})

test('a replacement request or response that does not fit is a hook failure', async () => {
  for (const [hook, pattern] of [
    [{ beforeModelCall: () => ({ system: 'no messages' }) }, /before_model_call hook failed: beforeModelCall returned an invalid request \(missing field `messages`/],
    [{ afterModelCall: (_id, r) => ({ ...r, finishReason: 42 }) }, /after_model_call hook failed: afterModelCall returned an invalid response/],
    [{ beforeModelCall: () => 10n }, /before_model_call hook failed: beforeModelCall returned a value that cannot become JSON/],
  ]) {
    const { agent } = scripted(['hi'], { hooks: [hook] })
    const o = await (await agent.createSession()).send('go').outcome
    assert.equal(o.errorKind, 'hook')
    assert.match(o.error, pattern)
  }
})
