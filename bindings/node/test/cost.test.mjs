// Cost and budgets: each call's cost in its event, the turn's and the session's in the outcome
// and on the session, prices set as options (model names kept as written), null for an unknown
// price, and budgets that end a turn `capped` with their own message.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, ScriptedProvider, ConfigError, agentTool, tool } from '../lib/index.js'
import { collect } from './helpers.mjs'

// $0.01 per output token, input free: ten output tokens cost $0.10, and with
// maxOutputTokens: 1 a budget's estimate of the next call is exactly $0.01.
const prices = { scripted: { input: 0, output: 10_000 } }
const ten = { inputTokens: 50, outputTokens: 10 }
const close = (actual, expected) => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} is not ${expected}`)

const echo = tool({
  name: 'echo',
  description: 'Echoes text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => text,
})

test('each call, the turn and the session carry their cost', async () => {
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], usage: ten },
    { text: 'done', usage: ten },
    { text: 'again', usage: ten },
  ])
  const agent = new Agent({ provider, tools: [echo], config: { prices } })
  const session = await agent.createSession()
  assert.equal(session.costUsd(), 0)
  const run = session.send('go')
  const events = await collect(run)
  const outcome = await run.outcome
  assert.equal(outcome.status, 'done')
  close(outcome.costUsd, 0.2)
  close(outcome.sessionCostUsd, 0.2)
  const costs = events.filter((e) => e.type === 'model_call_completed').map((e) => e.costUsd)
  assert.equal(costs.length, 2)
  costs.forEach((c) => close(c, 0.1))
  const second = await session.send('more').outcome
  close(second.costUsd, 0.1)
  close(second.sessionCostUsd, 0.3)
  close(session.costUsd(), 0.3)
  agent.close()
})

test('an unknown price is null, never a guess', async () => {
  const agent = new Agent({ provider: new ScriptedProvider([{ text: 'hi', usage: ten }]) })
  const session = await agent.createSession()
  const run = session.send('go')
  const events = await collect(run)
  const outcome = await run.outcome
  assert.equal(outcome.costUsd, null)
  assert.equal(outcome.sessionCostUsd, null)
  assert.deepEqual(events.filter((e) => e.type === 'model_call_completed').map((e) => e.costUsd), [null])
  assert.equal(session.costUsd(), null)
  agent.close()
})

test('a run budget ends the turn capped with its own message', async () => {
  const provider = ScriptedProvider.fromFn((request) => {
    const n = request.messages.filter((m) => m.role === 'tool').length
    return { toolCalls: [{ name: 'echo', arguments: { text: `hi ${n}` } }], usage: ten }
  })
  const agent = new Agent({ provider, tools: [echo], config: { prices, maxRunCostUsd: 0.205, maxOutputTokens: 1 } })
  const session = await agent.createSession()
  const run = session.send('go')
  const events = await collect(run)
  const outcome = await run.outcome
  assert.equal(outcome.status, 'capped')
  assert.equal(events.at(-1).type, 'run_capped')
  assert.equal(outcome.iterations, 2)
  close(outcome.costUsd, 0.2)
  assert.equal(
    outcome.finalText,
    "Stopped: the next model call (estimated $0.0100) would pass the run's budget of $0.205 ($0.2000 spent)",
  )
  const messages = await session.messages()
  assert.equal(messages.at(-1).message.role, 'assistant')
  agent.close()
})

test('a session budget counts earlier turns', async () => {
  const provider = new ScriptedProvider([{ text: 'one', usage: ten }, { text: 'never', usage: ten }])
  const agent = new Agent({ provider, config: { prices, maxSessionCostUsd: 0.105, maxOutputTokens: 1 } })
  const session = await agent.createSession()
  assert.equal((await session.send('a').outcome).status, 'done')
  const second = await session.send('b').outcome
  assert.equal(second.status, 'capped')
  assert.equal(second.costUsd, 0)
  close(second.sessionCostUsd, 0.1)
  assert.match(second.finalText, /would pass the session's budget of \$0\.105 \(\$0\.1000 spent\)/)
  agent.close()
})

test('a budget without a price is a configuration error; model names in prices are kept', async () => {
  assert.throws(
    () => new Agent({ provider: new ScriptedProvider([]), config: { maxRunCostUsd: 1 } }),
    (e) => e instanceof ConfigError && /price of model "scripted" is unknown/.test(e.message),
  )
  // A name that camelCase → snake_case would change is the user's, and price fields are options.
  const provider = new ScriptedProvider([{ text: 'hi', usage: ten }])
  const agent = new Agent({ provider, config: { prices: { scripted: { input: 0, cachedInput: 0, output: 20_000 } } } })
  close((await (await agent.createSession()).send('go').outcome).costUsd, 0.2)
  agent.close()
})

test("a sub-agent's cost is in the caller's outcome", async () => {
  const researcher = new Agent({ provider: new ScriptedProvider([{ text: 'Paris', usage: ten }]), config: { prices } })
  const lead = new Agent({
    provider: ScriptedProvider.fromFn((request) =>
      request.messages.some((m) => m.role === 'tool')
        ? { text: 'It is Paris.', usage: ten }
        : { toolCalls: [{ name: 'ask', arguments: { task: 'capital of France' } }], usage: ten },
    ),
    tools: [agentTool('ask', 'Ask the researcher.', researcher)],
    config: { prices },
  })
  const outcome = await (await lead.createSession()).send('capital?').outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  close(outcome.costUsd, 0.3)
  close(outcome.subAgents[0].costUsd, 0.1)
  lead.close()
  researcher.close()
})
