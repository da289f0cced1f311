// Typed final answers: session.sendTyped with a JSON Schema object, an object with
// toJSONSchema() or a jsonSchema property; the correction and the output.invalid /
// output.schema errors.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RunError } from '../lib/index.js'
import { scripted } from './helpers.mjs'

const CITY = {
  title: 'City',
  type: 'object',
  properties: { name: { type: 'string' }, population: { type: 'integer' } },
  required: ['name', 'population'],
}
const OSLO = { name: 'Oslo', population: 709000 }

test('a valid JSON answer is in outcome.structured and run.result(), and the schema is sent', async () => {
  const { agent, provider } = scripted([{ text: JSON.stringify(OSLO) }, { text: 'untyped answer' }])
  const session = await agent.createSession()
  const run = session.sendTyped('The capital of Norway?', CITY)
  const outcome = await run.outcome
  assert.equal(outcome.status, 'done')
  assert.deepEqual(outcome.structured, OSLO)
  assert.equal(outcome.finalText, JSON.stringify(OSLO))
  // result() gives the parsed answer, as Python's typed outcome does; the text stays in finalText.
  assert.deepEqual(await run.result(), OSLO)
  assert.equal(await session.send('untyped').result(), 'untyped answer')
  const [request] = provider.requests()
  assert.equal(request.outputSchema.name, 'City')
  assert.deepEqual(request.outputSchema.schema.required, ['name', 'population'])
  assert.equal(request.outputSchema.strict, false)
})

test('strict asks for the provider strict schema mode', async () => {
  const { agent, provider } = scripted([{ text: JSON.stringify(OSLO) }])
  const session = await agent.createSession()
  assert.deepEqual(await session.sendTyped('The capital of Norway?', CITY, { strict: true }).result(), OSLO)
  assert.equal(provider.requests()[0].outputSchema.strict, true)
})

test('an invalid answer gets one correction', async () => {
  const { agent, provider } = scripted([{ text: '{"name": "Oslo", "population": "many"}' }, { text: JSON.stringify(OSLO) }])
  const session = await agent.createSession()
  const outcome = await session.sendTyped({ content: [{ type: 'text', text: 'Capital?' }] }, CITY).outcome
  assert.equal(outcome.status, 'done')
  assert.deepEqual(outcome.structured, OSLO)
  assert.equal(outcome.iterations, 2)
  assert.equal(provider.callCount, 2)
})

test('an invalid answer twice ends error with output.invalid', async () => {
  const { agent } = scripted([{ text: '{"name": "Oslo"}' }, { text: 'not json' }])
  const session = await agent.createSession()
  const run = session.sendTyped('The capital of Norway?', CITY)
  const outcome = await run.outcome
  assert.equal(outcome.status, 'error')
  assert.equal(outcome.errorKind, 'output.invalid')
  assert.equal(outcome.structured, undefined)
  await assert.rejects(run.result(), (e) => e instanceof RunError && e.code === 'output.invalid')
})

test('a schema that is not valid JSON Schema ends error with output.schema', async () => {
  const { agent, provider } = scripted([{ text: '{}' }])
  const session = await agent.createSession()
  const outcome = await session.sendTyped('Anything?', { type: 'no such type' }).outcome
  assert.equal(outcome.errorKind, 'output.schema')
  assert.equal(provider.callCount, 0)
})

test('toJSONSchema() and a jsonSchema property give the schema; options.name names it', async () => {
  const { agent, provider } = scripted([{ text: JSON.stringify(OSLO) }, { text: '[1, 2]' }])
  const session = await agent.createSession()
  const fromMethod = { toJSONSchema: () => CITY }
  assert.deepEqual((await session.sendTyped('Capital?', fromMethod).outcome).structured, OSLO)
  const fromProperty = { jsonSchema: { type: 'array', items: { type: 'integer' } } }
  const outcome = await session.sendTyped('Numbers?', fromProperty, { name: 'Numbers' }).outcome
  assert.deepEqual(outcome.structured, [1, 2])
  assert.deepEqual(
    provider.requests().map((r) => r.outputSchema.name),
    ['City', 'Numbers'],
  )
})

test('a schema that is not an object is refused at once', async () => {
  const { agent, provider } = scripted([])
  const session = await agent.createSession()
  for (const bad of [null, 'City', [CITY], { toJSONSchema: () => 'no' }]) {
    assert.throws(() => session.sendTyped('x', bad), TypeError)
  }
  assert.equal(provider.callCount, 0)
})

test('an aborted signal starts the typed turn cancelled', async () => {
  const { agent } = scripted([{ text: JSON.stringify(OSLO) }])
  const session = await agent.createSession()
  const outcome = await session.sendTyped('x', CITY, { signal: AbortSignal.abort() }).outcome
  assert.equal(outcome.status, 'cancelled')
})

test('a typed delivery through the tab hub: a typed turn at once, and a turn of its own when queued', async () => {
  const { ScriptedProvider, TabHub, tool } = await import('../lib/index.js')
  let release
  const released = new Promise((resolve) => (release = resolve))
  const wait = tool({ name: 'wait', execute: async () => (await released, 'released') })
  const text = (request) => request.messages.at(-1).content.map((p) => p.text ?? '').join('')
  const provider = ScriptedProvider.fromFn((request) => {
    const last = request.messages.at(-1)
    if (last.role === 'tool') return { text: 'waited' }
    if (text(request) === 'block') return { toolCalls: [{ name: 'wait', arguments: {} }] }
    if (request.outputSchema) return { text: JSON.stringify({ name: text(request), population: text(request).length }) }
    return { text: `echo: ${text(request)}` }
  })
  const hub = await TabHub.create({ provider, tools: [wait] })
  const tab = await hub.openTab()

  const d = await hub.deliver(tab, 'Oslo', { schema: CITY, strict: true })
  assert.equal(d.status, 'started')
  const outcome = await d.run.outcome
  assert.equal(outcome.status, 'done')
  assert.deepEqual(outcome.structured, { name: 'Oslo', population: 4 })
  assert.deepEqual(await d.run.result(), { name: 'Oslo', population: 4 })
  assert.equal(provider.requests().at(-1).outputSchema.strict, true)
  await hub.waitIdle(tab)
  const plain = await hub.deliver(tab, 'plain')
  assert.equal(await plain.run.result(), 'echo: plain')
  await hub.waitIdle(tab)

  const first = await hub.deliver(tab, 'block')
  assert.equal((await hub.deliver(tab, 'a')).status, 'queued')
  const typed = await hub.deliver(tab, 'Bergen', { schema: { type: 'object' }, name: 'town' })
  assert.equal(typed.status, 'queued')
  assert.equal((await hub.deliver(tab, 'b')).status, 'queued')
  release()
  await first.run.outcome
  await hub.waitAllIdle()
  const turns = provider
    .requests()
    .filter((r) => r.messages.at(-1).role === 'user')
    .map((r) => [text(r), r.outputSchema?.name ?? null])
  assert.deepEqual(turns, [
    ['Oslo', 'City'],
    ['plain', null],
    ['block', null],
    ['a', null],
    ['Bergen', 'town'],
    ['b', null],
  ])
  await assert.rejects(hub.deliver(tab, 'x', { schema: 'City' }), TypeError)
  hub.close()
})
