// Human control: a gate that asks the person (the turn parks and resumes later, even after a
// restart), a hook that enforces a limit, and a sub-agent offered as a tool.
import { Agent, ScriptedProvider, agentTool, tool } from 'agent-core'

const pay = tool({
  name: 'pay',
  description: 'Pays an invoice, in cents.',
  parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
  gated: true,
  execute: ({ amount }) => `paid ${amount}`,
})
const researcher = new Agent({ provider: new ScriptedProvider(['Invoice 42: 5 EUR']) })
const provider = new ScriptedProvider([
  { toolCalls: [{ name: 'research', arguments: { task: 'find the invoice' } }] },
  { toolCalls: [{ name: 'pay', arguments: { amount: 500 } }] },
  'Paid invoice 42.',
])
const agent = new Agent({
  provider,
  tools: [pay, agentTool('research', 'Finds facts.', researcher)],
  gate: () => 'ask',
  hooks: [{ beforeToolCall: (call) => (call.arguments.amount > 10_000 ? { deny: 'over the limit' } : undefined) }],
})
const session = await agent.createSession()
const parked = await session.send('pay the invoice').outcome
if (parked.status !== 'awaiting_approval') throw new Error(`not parked: ${parked.status}`)
const answers = Object.fromEntries(parked.approval.calls.map((c) => [c.callId, 'approve']))
const done = await session.resolveApproval(parked.approval.id, answers).outcome
console.log(done.status, done.finalText)
agent.close()
researcher.close()
