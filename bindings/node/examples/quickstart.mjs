// Quickstart: an agent with one JS tool, driven by the scripted provider (no network, no key).
// Run it with: node examples/quickstart.mjs   (after `npm ci` in bindings/node)
import { Agent, ScriptedProvider, tool } from 'agent-core'

const echo = tool({
  name: 'echo',
  description: 'Echoes text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: async ({ text }) => `echo: ${text}`,
})

// ScriptedProvider replays a fixed script; it is not a model.
const provider = new ScriptedProvider([
  { toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] },
  { text: 'The tool said hi.' },
])

const agent = new Agent({ provider, tools: [echo], systemPrompt: 'You are helpful.' })
const session = await agent.createSession()
const run = session.send('Say hi through the tool', { signal: AbortSignal.timeout(10_000) })
for await (const event of run.events()) {
  if (event.type === 'tool_call_succeeded') console.log(`tool ${event.name} -> ${event.output}`)
}
const outcome = await run.outcome
console.log(`${outcome.status}: ${outcome.finalText}`)
agent.close()
