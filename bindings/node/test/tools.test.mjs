import { test } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { Agent, ScriptedProvider, tool, ToolError, FatalToolError, ToolDefinitionError } from '../lib/index.js'
import { collect, scripted, sleep, toolResults } from './helpers.mjs'

const call = (name, args = {}) => ({ toolCalls: [{ name, arguments: args }] })

test('sync and async tools both run; objects come back as JSON', async () => {
  const sync = tool({ name: 'sync', execute: () => 'from sync' })
  const asyncTool = tool({ name: 'async_tool', execute: async () => ({ items: [1, 2], ok: true }) })
  const asyncText = tool({ name: 'async_text', execute: async () => 'from async' })
  const syncObject = tool({ name: 'sync_object', execute: () => ({ kind: 'text', text: 'an object, not a reply' }) })
  const nothing = tool({ name: 'nothing', execute: () => undefined })
  const names = ['sync', 'async_tool', 'async_text', 'sync_object', 'nothing']
  const { agent, provider } = scripted([{ toolCalls: names.map((name) => ({ name })) }, { text: 'done' }], {
    tools: [sync, asyncTool, asyncText, syncObject, nothing],
  })
  const s = await agent.createSession()
  const o = await s.send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(o.toolCalls, 5)
  const results = toolResults(provider).map((m) => m.content[0].text)
  assert.deepEqual(results, [
    'from sync',
    '{"items":[1,2],"ok":true}',
    'from async',
    '{"kind":"text","text":"an object, not a reply"}',
    'ok',
  ])
})

test('the tool receives its arguments and a context with ids and an AbortSignal', async () => {
  let seen
  const t = tool({
    name: 'inspect',
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    execute: (args, cx) => {
      seen = { args, sessionId: cx.sessionId, callId: cx.callId, signal: cx.signal }
      return 'ok'
    },
  })
  const { agent } = scripted([call('inspect', { q: 'x' }), { text: 'end' }], { tools: [t] })
  const s = await agent.createSession()
  await s.send('go').outcome
  assert.deepEqual(seen.args, { q: 'x' })
  assert.equal(seen.sessionId, s.id)
  assert.match(seen.callId, /^call_/)
  assert.ok(seen.signal instanceof AbortSignal)
  assert.equal(seen.signal.aborted, false)
})

test('a thrown error or a rejected promise becomes an error result for the model; the loop goes on', async () => {
  const throws = tool({ name: 'throws', execute: () => { throw new Error('disk full') } })
  const rejects = tool({ name: 'rejects', execute: async () => { throw new ToolError('try later', { retryable: true }) } })
  const weird = tool({ name: 'weird', execute: () => { throw 'a plain string' } })
  const { agent, provider } = scripted(
    [{ toolCalls: [{ name: 'throws' }, { name: 'rejects' }, { name: 'weird' }] }, { text: 'recovered' }],
    { tools: [throws, rejects, weird] },
  )
  const s = await agent.createSession()
  const run = s.send('go')
  const events = await collect(run)
  const failed = events.filter((e) => e.type === 'tool_call_failed')
  assert.equal(failed.length, 3)
  assert.ok(failed.every((e) => e.fatal === false))
  const o = await run.outcome
  assert.equal(o.status, 'done')
  assert.equal(o.finalText, 'recovered')
  const results = toolResults(provider)
  assert.ok(results.every((m) => m.isError === true))
  const texts = results.map((m) => m.content[0].text).join('\n')
  assert.match(texts, /disk full/)
  assert.match(texts, /try later/)
  assert.match(texts, /a plain string/)
})

test('a fatal error ends the turn and the original JS error comes back', async () => {
  const original = new FatalToolError('the host is gone', { cause: new Error('socket closed') })
  const t = tool({ name: 'host', execute: async () => { throw original } })
  const { agent, provider } = scripted([call('host'), { text: 'never' }], { tools: [t] })
  const s = await agent.createSession()
  const run = s.send('go')
  const events = await collect(run)
  assert.equal(events.at(-1).type, 'run_failed')
  assert.equal(events.at(-1).outcome.cause, original)
  const o = await run.outcome
  assert.equal(o.status, 'error')
  assert.equal(o.errorKind, 'tool.fatal')
  assert.match(o.error, /the host is gone/)
  assert.equal(o.cause, original)
  await assert.rejects(run.result(), (e) => e === original)
  assert.equal(provider.callCount, 1)
  // Any error object with `fatal: true` works too.
  const custom = Object.assign(new TypeError('bad state'), { fatal: true })
  const t2 = tool({ name: 'host2', execute: () => { throw custom } })
  const { agent: a2 } = scripted([call('host2')], { tools: [t2] })
  const o2 = await (await a2.createSession()).send('go').outcome
  assert.equal(o2.cause, custom)
})

test('arguments are validated against the JSON Schema before the tool runs', async () => {
  let ran = 0
  const t = tool({
    name: 'add',
    parameters: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    execute: ({ a, b }) => (ran++, String(a + b)),
  })
  const { agent, provider } = scripted(
    [
      { toolCalls: [{ name: 'add', arguments: { a: 1 } }] },
      { toolCalls: [{ name: 'add', arguments: '{not json' }] },
      { toolCalls: [{ name: 'missing_tool', arguments: {} }] },
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'three' },
    ],
    { tools: [t] },
  )
  const s = await agent.createSession()
  const o = await s.send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(ran, 1)
  const texts = toolResults(provider).map((m) => m.content[0].text)
  assert.match(texts[0], /b/)
  assert.equal(texts[3], '3')
  assert.ok(toolResults(provider).slice(0, 3).every((m) => m.isError))
})

test('a zod schema gives the JSON Schema and validates (refinements included)', async () => {
  let got
  const t = tool({
    name: 'book',
    description: 'Books a table.',
    parameters: z.object({
      name: z.string().min(1),
      guests: z.number().int().refine((n) => n % 2 === 0, 'guests must be even'),
    }),
    execute: (args) => ((got = args), 'booked'),
  })
  const { agent, provider } = scripted(
    [call('book', { name: 'Ada', guests: 3 }), call('book', { name: 'Ada', guests: 4 }), { text: 'ok' }],
    { tools: [t] },
  )
  const s = await agent.createSession()
  await s.send('go').outcome
  const sent = provider.requests()[0].tools[0]
  assert.equal(sent.name, 'book')
  assert.equal(sent.parameters.type, 'object')
  assert.deepEqual(Object.keys(sent.parameters.properties).sort(), ['guests', 'name'])
  assert.equal(sent.parameters.$schema, undefined)
  const [first, second] = toolResults(provider)
  assert.equal(first.isError, true)
  assert.match(first.content[0].text, /guests: guests must be even/)
  assert.equal(second.content[0].text, 'booked')
  assert.deepEqual(got, { name: 'Ada', guests: 4 })
})

test('tool definitions are checked: names, duplicates, schemas', () => {
  assert.throws(() => tool({ name: 'bad name', execute() {} }), (e) => e instanceof ToolDefinitionError && e.code === 'tool_invalid')
  assert.throws(() => tool({ name: 'x' }), ToolDefinitionError)
  assert.throws(
    () => tool({ name: 'x', description: 42, execute() {} }),
    (e) => e instanceof ToolDefinitionError && e.code === 'tool_invalid' && /description must be a string/.test(e.message),
  )
  assert.equal(tool({ name: 'x', description: null, execute() {} }).description, '')
  assert.throws(() => tool({ name: 'x', parameters: [], execute() {} }), ToolDefinitionError)
  const a = tool({ name: 'same', execute() {} })
  assert.throws(
    () => new Agent({ provider: new ScriptedProvider([]), tools: [a, a] }),
    (e) => e instanceof ToolDefinitionError && e.code === 'tool_duplicate',
  )
  const invalid = tool({ name: 'inv', parameters: { type: 'object', properties: { a: { type: 12 } } }, execute() {} })
  assert.throws(
    () => new Agent({ provider: new ScriptedProvider([]), tools: [invalid] }),
    (e) => e instanceof ToolDefinitionError && e.code === 'tool_invalid_schema',
  )
  assert.throws(() => new Agent({ provider: new ScriptedProvider([]), tools: [{ name: 'raw' }] }), ToolDefinitionError)
})

test('parallelSafe tools run at the same time; others one after another', async () => {
  const spans = {}
  const make = (name, parallelSafe) =>
    tool({
      name,
      parallelSafe,
      execute: async () => {
        const start = performance.now()
        await sleep(80)
        spans[name] = [start, performance.now()]
        return name
      },
    })
  const tools = [make('p1', true), make('p2', true), make('s1', false), make('s2', false)]
  const { agent } = scripted(
    [{ toolCalls: [{ name: 'p1' }, { name: 'p2' }] }, { toolCalls: [{ name: 's1' }, { name: 's2' }] }, { text: 'ok' }],
    { tools },
  )
  await (await agent.createSession()).send('go').outcome
  const overlap = (a, b) => a[0] < b[1] && b[0] < a[1]
  assert.ok(overlap(spans.p1, spans.p2), 'parallel-safe tools overlap')
  assert.ok(!overlap(spans.s1, spans.s2), 'sequential tools do not overlap')
})

test('a batch of calls larger than one dispatch (1 500 at once) is answered call by call', async () => {
  // One message's parallel-safe calls reach the JS thread together; the native side hands
  // them to JS in several dispatches of at most 1 024 calls.
  const calls = 1500
  const seen = new Set()
  const twice = tool({
    name: 'twice',
    parallelSafe: true,
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    execute: ({ n }, cx) => {
      seen.add(cx.callId)
      return n % 2 === 0 ? String(n * 2) : Promise.resolve({ doubled: n * 2 })
    },
  })
  const toolCalls = Array.from({ length: calls }, (_, n) => ({ name: 'twice', arguments: { n } }))
  const { agent, provider } = scripted([{ toolCalls }, { text: 'done' }], {
    tools: [twice],
    config: { maxToolCalls: null, maxParallelTools: calls, maxRepeatedCalls: 0 },
  })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.status, 'done', o.error)
  assert.equal(o.toolCalls, calls)
  assert.equal(seen.size, calls)
  const results = toolResults(provider).map((m) => m.content[0].text)
  assert.equal(results.length, calls)
  results.forEach((text, n) => assert.equal(text, n % 2 === 0 ? String(n * 2) : JSON.stringify({ doubled: n * 2 })))
})

test("a tool's own timeout fails the call and aborts its signal", async () => {
  let signal
  const t = tool({
    name: 'stuck',
    timeoutMs: 100,
    execute: (_args, cx) => {
      signal = cx.signal
      return new Promise((resolve) => cx.signal.addEventListener('abort', () => resolve('late')))
    },
  })
  const { agent, provider } = scripted([call('stuck'), { text: 'moved on' }], { tools: [t] })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(toolResults(provider)[0].isError, true)
  assert.match(toolResults(provider)[0].content[0].text, /time/i)
  await sleep(20)
  assert.equal(signal.aborted, true)
})
