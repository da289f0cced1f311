import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  Agent,
  ScriptedProvider,
  MemoryStore,
  tool,
  ConfigError,
  SessionExistsError,
  SessionNotFoundError,
  AgentCoreError,
} from '../lib/index.js'
import { collect, echo, scripted, sleep, until } from './helpers.mjs'

test('a turn with a tool call ends done with the final text and counts', async () => {
  const { agent, provider } = scripted(
    [{ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'The tool said hi.' }],
    { tools: [echo], systemPrompt: 'Be brief.' },
  )
  const session = await agent.createSession()
  const run = session.send('Say hi')
  assert.equal(typeof run.id, 'string')
  assert.equal(run.sessionId, session.id)
  // The ids are read when first asked for; JSON still shows them.
  assert.deepEqual(JSON.parse(JSON.stringify(run)), { id: run.id, sessionId: session.id })
  assert.deepEqual(JSON.parse(JSON.stringify(session)), { id: session.id })
  const outcome = await run.outcome
  assert.equal(outcome.status, 'done')
  assert.equal(outcome.finalText, 'The tool said hi.')
  assert.equal(outcome.iterations, 2)
  assert.equal(outcome.toolCalls, 1)
  assert.equal(await run.result(), 'The tool said hi.')
  assert.equal(run.finished, true)
  assert.deepEqual(run.status().state, 'complete')
  assert.equal(provider.callCount, 2)
  const [first] = provider.requests()
  assert.equal(first.system, 'Be brief.')
  assert.deepEqual(
    first.tools.map((t) => t.name),
    ['echo'],
  )
})

test('events arrive in order with camelCase fields and a typed final event', async () => {
  const { agent } = scripted(
    [{ reasoning: 'think', toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] }, { text: 'two words' }],
    { tools: [echo] },
  )
  const session = await agent.createSession()
  const run = session.send('go')
  const events = await collect(run)
  const types = events.map((e) => e.type)
  assert.deepEqual(types, [
    'run_started',
    'model_call_started',
    'reasoning_token',
    'model_call_completed',
    'tool_call_started',
    'tool_call_succeeded',
    'model_call_started',
    'content_token',
    'content_token',
    'model_call_completed',
    'run_completed',
  ])
  for (const e of events) assert.equal(e.sessionId, session.id)
  assert.equal(events[0].runId, run.id)
  const started = events.find((e) => e.type === 'tool_call_started')
  assert.deepEqual(started.arguments, { text: 'a' })
  assert.equal(typeof started.callId, 'string')
  const ok = events.find((e) => e.type === 'tool_call_succeeded')
  assert.equal(ok.output, 'echo: a')
  assert.equal(ok.truncated, false)
  assert.equal(typeof ok.durationMs, 'number')
  const last = events.at(-1)
  assert.equal(last.outcome.status, 'done')
  assert.equal(last.outcome.finalText, 'two words')
  // A second iterator opened after the end sees nothing and ends.
  assert.deepEqual(await collect(run), [])
})

test('the onEvent callback sees every event of every run', async () => {
  const seen = []
  const { agent } = scripted([{ text: 'one' }, { text: 'two' }], { onEvent: (e) => seen.push(e) })
  const s = await agent.createSession()
  await s.send('a').outcome
  await s.send('b').outcome
  await until(() => seen.filter((e) => e.type === 'run_completed').length === 2)
  assert.equal(seen[0].type, 'run_started')
  assert.deepEqual(
    seen.filter((e) => e.type === 'run_completed').map((e) => e.outcome.finalText),
    ['one', 'two'],
  )
})

test('an onEvent callback that falls behind loses streamed tokens first and is told how many', async () => {
  const tokens = 3000
  const seen = []
  const warnings = []
  const onWarning = (w) => warnings.push(w.message)
  process.on('warning', onWarning)
  try {
    let run
    const onEvent = (e) => {
      if (seen.length === 0) {
        // Holds the JS thread until the whole answer has streamed past (a fixed pause was not
        // always long enough on a loaded machine); the deadline only keeps a bug from hanging.
        const deadline = Date.now() + 20_000
        while (!run.finished && Date.now() < deadline);
      }
      seen.push(e.type)
    }
    const { agent } = scripted([{ text: Array(tokens).fill('w').join(' ') }], { onEvent, config: { eventBuffer: 64 } })
    run = (await agent.createSession()).send('go')
    const outcome = await run.outcome
    assert.ok(seen.length > 0 && run.finished)
    assert.equal(outcome.status, 'done')
    await until(() => seen.includes('run_completed') && warnings.length > 0)
    const others = seen.filter((t) => t !== 'content_token')
    assert.deepEqual(others, ['run_started', 'model_call_started', 'model_call_completed', 'run_completed'])
    const dropped = warnings
      .map((m) => /(\d+) events were dropped/.exec(m))
      .filter(Boolean)
      .reduce((sum, m) => sum + Number(m[1]), 0)
    const shown = seen.filter((t) => t === 'content_token').length
    // The callback blocks inside a batch that was taken before it blocked (at most 64 events:
    // on a loaded machine the queue may already have been full by then), and the queue keeps
    // at most 64 more until it returns.
    assert.ok(dropped > 0 && shown <= 2 * 64, `${shown} shown, ${dropped} dropped`)
    assert.equal(shown + dropped, tokens)
  } finally {
    process.off('warning', onWarning)
  }
})

test('status() reports thinking, tool_call and complete', async () => {
  let release
  const gateOpen = new Promise((r) => (release = r))
  const slow = tool({ name: 'slow', execute: async () => (await gateOpen, 'ok') })
  const { agent } = scripted([{ delayMs: 500, then: { toolCalls: [{ name: 'slow' }] } }, { text: 'end' }], {
    tools: [slow],
  })
  const s = await agent.createSession()
  const run = s.send('x')
  await until(() => run.status().state === 'thinking')
  assert.equal(run.status().iteration, 1)
  await until(() => run.status().state === 'tool_call')
  assert.equal(run.status().currentTool, 'slow')
  release()
  const o = await run.outcome
  assert.equal(o.status, 'done')
  const st = run.status()
  assert.equal(st.state, 'complete')
  assert.equal(st.lastMessage, 'end')
  assert.equal(st.currentTool, null)
})

test('the iteration cap ends the turn capped', async () => {
  const steps = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }))
  const { agent } = scripted(steps, { tools: [echo], config: { maxIterations: 3 } })
  const s = await agent.createSession()
  const run = s.send('loop')
  const events = await collect(run)
  assert.equal(events.at(-1).type, 'run_capped')
  const o = await run.outcome
  assert.equal(o.status, 'capped')
  assert.equal(o.iterations, 3)
  await assert.rejects(run.result(), (e) => e.code === 'capped' && e.outcome.status === 'capped')
})

test('status().lastMessage follows the text while the model is still streaming it', async () => {
  const { agent } = scripted([{ hang: 'Reading the page for you now' }])
  const s = await agent.createSession()
  const run = s.send('x')
  await until(() => run.status().lastMessage === 'Reading the page for you now')
  // The model call has not finished: the text is the streamed text so far.
  assert.equal(run.finished, false)
  assert.equal(run.status().state, 'thinking')
  run.cancel()
  assert.equal((await run.outcome).status, 'cancelled')
})

/** A planner that calls echo `calls` times, one call per step, then answers. */
const echoes = (calls) =>
  ScriptedProvider.fromFn((request) => {
    const done = request.messages.filter((m) => m.role === 'tool').length
    return done < calls ? { toolCalls: [{ name: 'echo', arguments: { text: `call ${done + 1}` } }] } : { text: `${done} calls` }
  })

/** Runs one turn of 20 echo calls under `config`; returns its outcome and how many calls ran. */
async function twentyCalls(config) {
  const agent = new Agent({ provider: echoes(20), tools: [echo], ...(config === 'absent' ? {} : { config }) })
  const run = (await agent.createSession()).send('go')
  const events = await collect(run)
  const ran = events.filter((e) => e.type === 'tool_call_succeeded').length
  return { outcome: await run.outcome, ran }
}

test('maxToolCalls: absent or undefined is the default of 12, a number is that cap, null is no cap', async () => {
  for (const config of ['absent', {}, { maxToolCalls: undefined }]) {
    const { outcome, ran } = await twentyCalls(config)
    assert.equal(outcome.status, 'capped', JSON.stringify(config))
    assert.equal(ran, 12, JSON.stringify(config))
  }
  let { outcome, ran } = await twentyCalls({ maxToolCalls: 3 })
  assert.equal(outcome.status, 'capped')
  assert.equal(ran, 3)
  ;({ outcome, ran } = await twentyCalls({ maxToolCalls: null }))
  assert.equal(outcome.status, 'done')
  assert.equal(ran, 20)
  assert.equal(outcome.finalText, '20 calls')
  // null keeps the default for every other key (here: the iteration cap of 100 still holds).
  ;({ outcome, ran } = await twentyCalls({ maxToolCalls: null, maxIterations: null }))
  assert.equal(outcome.status, 'done')
  assert.throws(() => new Agent({ provider: echoes(1), config: { maxToolCalls: -1 } }), ConfigError)
})

test('a provider error ends the turn with status error and a stable kind', async () => {
  const { agent } = scripted([{ error: { kind: 'auth', message: 'bad key' } }])
  const s = await agent.createSession()
  const run = s.send('x')
  const o = await run.outcome
  assert.equal(o.status, 'error')
  assert.match(o.errorKind, /^provider\./)
  assert.match(o.error, /bad key/)
  assert.equal(run.status().state, 'error')
  await assert.rejects(run.result(), (e) => {
    assert.ok(e instanceof AgentCoreError)
    assert.equal(e.name, 'RunError')
    assert.equal(e.code, o.errorKind)
    return true
  })
})

test('an awaited outcome is the object its final event carries, keys in the same order', async () => {
  // The awaited outcome of the usual turn is made from its fields (JsOutcome in
  // src/convert.rs); the final event's goes through the generic conversion.
  const ten = { inputTokens: 50, outputTokens: 10, cachedInputTokens: 3, reasoningTokens: 2 }
  const turns = [
    [{ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], usage: ten }, { text: 'done', usage: ten }],
    [{ error: { kind: 'auth', message: 'bad key' } }],
    Array.from({ length: 3 }, () => ({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] })),
  ]
  const statuses = []
  for (const steps of turns) {
    const provider = new ScriptedProvider(steps)
    const prices = { scripted: { input: 1, output: 10_000 } }
    const agent = new Agent({ provider, tools: [echo], config: { prices, maxIterations: 2 } })
    const run = (await agent.createSession()).send('go')
    const events = await collect(run)
    const outcome = await run.outcome
    const carried = events.at(-1).outcome
    assert.deepEqual(outcome, carried)
    assert.deepEqual(Object.keys(outcome), Object.keys(carried))
    assert.deepEqual(Object.keys(outcome.usage), Object.keys(carried.usage))
    statuses.push(outcome.status)
  }
  assert.deepEqual(statuses, ['done', 'error', 'capped'])
})

test('sessions keep history; turns of one session run one after another', async () => {
  const { agent, provider } = scripted([{ text: 'first' }, { text: 'second' }])
  const s = await agent.createSession()
  const a = s.send('one')
  const b = s.send('two')
  assert.equal((await b.outcome).finalText, 'second')
  assert.equal((await a.outcome).finalText, 'first')
  const second = provider.requests()[1]
  assert.deepEqual(
    second.messages.map((m) => m.role),
    ['user', 'assistant', 'user'],
  )
  const messages = await s.messages()
  assert.deepEqual(
    messages.map((m) => m.seq),
    [1, 2, 3, 4],
  )
  assert.equal(messages[1].message.role, 'assistant')
  const history = await s.modelHistory()
  assert.equal(history.length, 4)
})

test('a message with several parts can be sent', async () => {
  const { agent, provider } = scripted([{ text: 'seen' }])
  const s = await agent.createSession()
  const o = await s.send({ content: [{ type: 'text', text: 'look' }, { type: 'text', text: 'here' }] }).outcome
  assert.equal(o.status, 'done')
  assert.deepEqual(
    provider.requests()[0].messages[0].content.map((p) => p.text),
    ['look', 'here'],
  )
})

test('sessions are opened again through the agent and its store', async () => {
  const store = new MemoryStore()
  const provider = new ScriptedProvider([{ text: 'hello' }, { text: 'again' }])
  const a1 = new Agent({ provider, store })
  const id = '0f8e3c5a-2b1d-4c7e-9a6f-1d2e3f4a5b6c'
  const s = await a1.createSession({ id })
  assert.equal(s.id, id)
  await s.send('hi').outcome
  await assert.rejects(a1.createSession({ id }), SessionExistsError)
  assert.deepEqual(await store.sessionIds(), [id])
  // A second agent over the same store loads the history.
  const a2 = new Agent({ provider, store })
  const s2 = await a2.openSession(id)
  assert.equal((await s2.messages()).length, 2)
  await s2.send('more').outcome
  assert.equal((await s2.messages()).length, 4)
})

test('unknown and malformed session ids are typed errors', async () => {
  const { agent } = scripted([])
  await assert.rejects(agent.openSession('0f8e3c5a-2b1d-4c7e-9a6f-1d2e3f4a5b6c'), (e) => {
    assert.ok(e instanceof SessionNotFoundError)
    assert.ok(e instanceof Error)
    assert.equal(e.code, 'session_not_found')
    assert.doesNotMatch(e.message, /^\[/)
    return true
  })
  await assert.rejects(agent.createSession({ id: 'not-a-uuid' }), (e) => e instanceof ConfigError && e.code === 'invalid_argument')
})

test('bad options are ConfigErrors', () => {
  assert.throws(() => new Agent({}), (e) => e instanceof ConfigError && e.code === 'config')
  assert.throws(() => new ScriptedProvider([{ error: { kind: 'nope' } }]), ConfigError)
  assert.throws(
    () => new Agent({ provider: new ScriptedProvider([]), config: { onDenial: 'sometimes' } }),
    ConfigError,
  )
  assert.throws(() => new Agent({ provider: new ScriptedProvider([]), gate: 'yes' }), ConfigError)
})

test('100 concurrent sessions each run a JS tool and finish', async () => {
  let calls = 0
  const count = tool({
    name: 'count',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    execute: async ({ n }) => {
      calls++
      await sleep(1)
      return { n }
    },
  })
  const provider = new ScriptedProvider(
    Array.from({ length: 100 }, (_, i) => [{ toolCalls: [{ name: 'count', arguments: { n: i } }] }, { text: 'ok' }]).flat(),
  )
  // One script shared by 100 sessions: each session's steps may interleave, so every reply is
  // either a call or a text; all sessions still end, and each call runs once.
  const agent = new Agent({ provider, tools: [count] })
  const sessions = await Promise.all(Array.from({ length: 100 }, () => agent.createSession()))
  assert.equal(new Set(sessions.map((s) => s.id)).size, 100)
  const outcomes = await Promise.all(sessions.map((s) => s.send('go').outcome))
  assert.equal(
    outcomes.filter((o) => o.status === 'done').length + outcomes.filter((o) => o.status === 'error').length,
    100,
  )
  assert.equal(provider.callCount, outcomes.reduce((n, o) => n + o.iterations, 0))
  assert.equal(calls, outcomes.reduce((n, o) => n + o.toolCalls, 0))
})

test('ScriptedProvider.fromFn plans each step from the request', async () => {
  const seen = []
  const provider = ScriptedProvider.fromFn((request) => {
    seen.push(request.messages.length)
    const results = request.messages.filter((m) => m.role === 'tool')
    if (results.length === 0) return { toolCalls: [{ name: 'echo', arguments: { text: request.messages[0].content[0].text } }] }
    return { text: `the tool said: ${results[0].content[0].text}` }
  })
  const agent = new Agent({ provider, tools: [echo] })
  const o = await (await agent.createSession()).send('ping').outcome
  assert.equal(o.finalText, 'the tool said: echo: ping')
  assert.deepEqual(seen, [1, 3])
  const broken = ScriptedProvider.fromFn(() => {
    throw new Error('script bug')
  })
  const o2 = await (await new Agent({ provider: broken }).createSession()).send('x').outcome
  assert.equal(o2.status, 'error')
  assert.match(o2.error, /script bug/)
})
