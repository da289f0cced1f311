import { test } from 'node:test'
import assert from 'node:assert/strict'
import { tool } from '../lib/index.js'
import { collect, scripted, sleep, toolResults } from './helpers.mjs'

let runs = 0
const del = tool({
  name: 'fs_delete',
  gated: true,
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: ({ path }) => (runs++, `deleted ${path}`),
})
const steps = () => [{ toolCalls: [{ name: 'fs_delete', arguments: { path: '/tmp/x' } }] }, { text: 'finished' }]

test('without a gate, gated calls are denied and never run', async () => {
  runs = 0
  const { agent } = scripted(steps(), { tools: [del] })
  const run = (await agent.createSession()).send('go')
  const events = await collect(run)
  assert.ok(events.some((e) => e.type === 'tool_call_denied'))
  assert.equal((await run.outcome).status, 'denied')
  assert.equal(runs, 0)
})

test('the gate sees the request and allows (sync and async answers)', async () => {
  for (const answer of [true, 'allow', { allow: true }, { decision: 'allow' }]) {
    runs = 0
    const requests = []
    const { agent } = scripted(steps(), {
      tools: [del],
      gate: async (req) => {
        requests.push(req)
        await sleep(1)
        return answer
      },
    })
    const s = await agent.createSession()
    const o = await s.send('go').outcome
    assert.equal(o.status, 'done', JSON.stringify(answer))
    assert.equal(runs, 1)
    assert.equal(requests.length, 1)
    assert.equal(requests[0].tool, 'fs_delete')
    assert.equal(requests[0].sessionId, s.id)
    assert.deepEqual(requests[0].arguments, { path: '/tmp/x' })
    assert.equal(typeof requests[0].callId, 'string')
    assert.deepEqual(requests[0].origin, { kind: 'person' })
  }
})

test('a denial ends the turn denied with the reason; free tools never ask', async () => {
  runs = 0
  let asked = 0
  const free = tool({ name: 'free', execute: () => 'free ok' })
  const { agent } = scripted(
    [{ toolCalls: [{ name: 'free' }] }, ...steps()],
    { tools: [del, free], gate: (req) => (asked++, { allow: false, reason: `no deleting ${req.arguments.path}` }) },
  )
  const run = (await agent.createSession()).send('go')
  const events = await collect(run)
  const denied = events.find((e) => e.type === 'tool_call_denied')
  assert.match(denied.reason, /no deleting \/tmp\/x/)
  const o = await run.outcome
  assert.equal(o.status, 'denied')
  assert.equal(asked, 1)
  assert.equal(runs, 0)
})

test('with onDenial tell_model the model hears the denial and goes on', async () => {
  runs = 0
  const { agent, provider } = scripted(steps(), {
    tools: [del],
    gate: () => false,
    config: { onDenial: 'tell_model' },
  })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.status, 'done')
  assert.equal(o.finalText, 'finished')
  assert.equal(runs, 0)
  assert.equal(toolResults(provider)[0].isError, true)
})

test('a gate that throws or rejects denies the call and the process lives on', async () => {
  for (const gate of [
    () => {
      throw new Error('gate exploded')
    },
    async () => {
      throw new Error('gate rejected')
    },
  ]) {
    runs = 0
    const { agent } = scripted(steps(), { tools: [del], gate })
    const run = (await agent.createSession()).send('go')
    const events = await collect(run)
    const denied = events.find((e) => e.type === 'tool_call_denied')
    assert.match(denied.reason, /gate (exploded|rejected)/)
    assert.equal((await run.outcome).status, 'denied')
    assert.equal(runs, 0)
  }
})
