// Sub-agents: agentTool offers one agent to another as a tool; the sub-agent's answer is the
// tool's result, what it spent is in the calling turn's usage and, per tool, in
// outcome.subAgents; a call nesting deeper than maxDepth is refused with a message the model sees.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, ScriptedProvider, ToolSet, ConfigError, agentTool, tool } from '../lib/index.js'
import { collect } from './helpers.mjs'

/** Calls `tool` once with `task` (reporting `usage`), then answers with what it returned. */
const caller = (tool, task, usage = { inputTokens: 10, outputTokens: 2 }) =>
  ScriptedProvider.fromFn((request) => {
    const result = request.messages.findLast((m) => m.role === 'tool')
    if (!result) return { toolCalls: [{ name: tool, arguments: { task } }], usage }
    return { text: `heard: ${result.content.map((p) => p.text ?? '').join('')}`, usage }
  })

test('a lead agent calls a sub-agent and its usage is in the outcome, per tool and in total', async () => {
  const researcherProvider = new ScriptedProvider([{ text: 'Paris', usage: { inputTokens: 100, outputTokens: 1 } }])
  const researcher = new Agent({ provider: researcherProvider, systemPrompt: 'Answer in one word.' })
  const tools = agentTool('ask_researcher', 'Ask the researcher.', researcher)
  assert.ok(tools instanceof ToolSet)
  assert.deepEqual(tools.names, ['ask_researcher'])
  const [spec] = tools.specs
  assert.equal(spec.description, 'Ask the researcher.')
  assert.deepEqual(spec.parameters.required, ['task'])

  const lead = new Agent({ provider: caller('ask_researcher', 'capital of France?'), tools: [tools] })
  assert.deepEqual(lead.toolNames, ['ask_researcher'])
  const run = (await lead.createSession()).send('go')
  const events = await collect(run)
  const outcome = await run.outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  assert.equal(outcome.finalText, 'heard: Paris')
  // The sub-agent ran in a session of its own, on the task, with its own system prompt.
  const [request] = researcherProvider.requests()
  assert.equal(request.system, 'Answer in one word.')
  assert.equal(request.messages.at(-1).content[0].text, 'capital of France?')

  assert.equal(outcome.subAgents.length, 1)
  const [spent] = outcome.subAgents
  assert.deepEqual(Object.keys(spent).sort(), ['calls', 'iterations', 'tool', 'usage'])
  assert.equal(spent.tool, 'ask_researcher')
  assert.equal(spent.calls, 1)
  assert.equal(spent.iterations, 1)
  assert.equal(spent.usage.inputTokens, 100)
  assert.equal(spent.usage.outputTokens, 1)
  // The lead's two model calls (10 + 10 input tokens) plus the sub-agent's 100.
  assert.equal(outcome.usage.inputTokens, 120)
  assert.equal(outcome.usage.outputTokens, 5)
  // The final event carries the same outcome.
  const last = events.at(-1)
  assert.equal(last.type, 'run_completed')
  assert.deepEqual(last.outcome.subAgents, outcome.subAgents)
  const result = events.find((e) => e.type === 'tool_call_succeeded')
  assert.equal(result.name, 'ask_researcher')
  assert.equal(result.output, 'Paris')
})

test('a turn without sub-agents has no subAgents', async () => {
  const agent = new Agent({ provider: new ScriptedProvider(['hi']) })
  const outcome = await (await agent.createSession()).send('go').outcome
  assert.equal(outcome.status, 'done')
  assert.equal(outcome.subAgents, undefined)
})

test('maxDepth refuses a call nested too deeply, with a message the model sees', async () => {
  const leafProvider = new ScriptedProvider(['leaf'])
  const leaf = new Agent({ provider: leafProvider })
  const middle = new Agent({ provider: caller('leaf', 'go on'), tools: [agentTool('leaf', 'The leaf.', leaf, { maxDepth: 1 })] })
  const top = new Agent({ provider: caller('middle', 'go'), tools: [agentTool('middle', 'The middle.', middle)] })
  const outcome = await (await top.createSession()).send('go').outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  assert.match(outcome.finalText, /leaf was not run: sub-agents nest at most 1 levels deep, and this call would be level 2/)
  assert.equal(leafProvider.callCount, 0, 'the leaf never ran')
  // Only the middle agent ran below the top one; its two model calls are counted.
  assert.deepEqual(
    outcome.subAgents.map((s) => [s.tool, s.calls, s.iterations]),
    [['middle', 1, 2]],
  )

  // With the default depth (3) the same chain runs to the leaf.
  const deep = new Agent({ provider: caller('leaf', 'go on'), tools: [agentTool('leaf', 'The leaf.', leaf)] })
  const top2 = new Agent({ provider: caller('middle', 'go'), tools: [agentTool('middle', 'The middle.', deep)] })
  const outcome2 = await (await top2.createSession()).send('go').outcome
  assert.equal(outcome2.finalText, 'heard: heard: leaf')
})

test('agentTool checks its arguments', () => {
  const agent = new Agent({ provider: new ScriptedProvider([]) })
  assert.throws(() => agentTool('x', 'y', {}), ConfigError)
  assert.throws(() => agentTool('x', 'y', agent, { maxDepth: -1 }), ConfigError)
  assert.throws(() => agentTool('x', 'y', agent, { maxDepth: 1.5 }), ConfigError)
  assert.throws(() => agentTool('x', 'y', agent, { depth: 1 }), /unknown option `depth`/)
  assert.deepEqual(agentTool('x', 'y', agent, { maxDepth: 0 }).names, ['x'])
})

/** Calls `tool` with `args` for each new user message, then answers with its result. */
const perMessage = (tool, args, prefix) =>
  ScriptedProvider.fromFn((request) => {
    const last = request.messages.at(-1)
    if (last.role === 'user') return { toolCalls: [{ name: tool, arguments: args }] }
    return { text: prefix + last.content.map((p) => p.text ?? '').join('') }
  })

test("a sub-agent's approval parks the caller; answering it resumes both", async () => {
  const paid = []
  const pay = tool({
    name: 'pay',
    description: 'Pays.',
    gated: true,
    parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
    execute: ({ amount }) => {
      paid.push(amount)
      return `paid ${amount}`
    },
  })
  const helper = new Agent({
    provider: perMessage('pay', { amount: 5 }, 'helper: '),
    tools: [pay],
    gate: () => ({ decision: 'ask', prompt: 'Pay?' }),
  })
  const lead = new Agent({
    provider: perMessage('helper', { task: 'pay 5' }, 'heard: '),
    tools: [agentTool('helper', 'Pays.', helper)],
  })
  const session = await lead.createSession()
  let outcome = await session.send('pay the bill').outcome
  assert.equal(outcome.status, 'awaiting_approval', JSON.stringify(outcome))
  const [call] = outcome.approval.calls
  assert.equal(call.tool, 'pay')
  assert.deepEqual(call.arguments, { amount: 5 })
  assert.equal(call.via.length, 1)
  assert.deepEqual(Object.keys(call.via[0]).sort(), ['approvalId', 'callId', 'sessionId', 'tool'])
  assert.equal(call.via[0].tool, 'helper')
  assert.ok(call.callId.startsWith(`${call.via[0].callId}/`), call.callId)
  assert.notEqual(call.via[0].sessionId, session.id)
  assert.deepEqual(paid, [])

  // Edits are checked against the sub-agent's tool.
  assert.throws(
    () => session.resolveApproval(outcome.approval.id, { [call.callId]: { decision: 'approve', arguments: { amount: 'x' } } }),
    /amount/,
  )
  outcome = await session.resolveApproval(outcome.approval.id, { [call.callId]: 'approve' }).outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  assert.equal(outcome.finalText, 'heard: helper: paid 5')
  assert.deepEqual(paid, [5])
})

test('a typed sub-agent answers with its checked JSON', async () => {
  const cityProvider = new ScriptedProvider([{ text: JSON.stringify({ name: 'Oslo', population: 709000 }) }])
  const researcher = new Agent({ provider: cityProvider })
  const output = {
    title: 'City',
    type: 'object',
    properties: { name: { type: 'string' }, population: { type: 'integer' } },
    required: ['name', 'population'],
  }
  const lead = new Agent({ provider: caller('city', 'the capital of Norway?'), tools: [agentTool('city', 'Finds a city.', researcher, { output })] })
  const outcome = await (await lead.createSession()).send('go').outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  assert.deepEqual(JSON.parse(outcome.finalText.replace(/^heard: /, '')), { name: 'Oslo', population: 709000 })
  assert.equal(cityProvider.requests()[0].outputSchema.name, 'City')
  assert.throws(() => agentTool('city', 'x', researcher, { outputs: output }), /unknown option `outputs`/)
})
