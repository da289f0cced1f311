// One Node client of the side-by-side comparison (benches/src/bin/compare.rs).
//
// Runs --sessions sessions of tool steps plus a final answer against mock-llm at --url,
// --concurrency at a time, with a no-op JS tool that returns at once (node-sync) or from an
// async function (node-async), and prints one JSON line: calls, wall_s, cpu_s, peak_rss_kib.
import { parseArgs } from 'node:util'
import { Agent, OpenAICompatible, tool } from '../../bindings/node/lib/index.js'

const { values } = parseArgs({
  options: {
    variant: { type: 'string' },
    url: { type: 'string' },
    sessions: { type: 'string', default: '30' },
    concurrency: { type: 'string', default: '1' },
    steps: { type: 'string', default: '10' },
  },
})
if (values.variant !== 'node-sync' && values.variant !== 'node-async') {
  throw new Error(`--variant must be node-sync or node-async, not ${values.variant}`)
}
const steps = Number(values.steps)
const parameters = { type: 'object', properties: {} }
const step =
  values.variant === 'node-sync'
    ? tool({ name: 'step', description: 'One step.', parameters, execute: () => 'ok' })
    : tool({ name: 'step', description: 'One step.', parameters, execute: async () => 'ok' })
const agent = new Agent({
  provider: new OpenAICompatible({ model: 'mock', baseUrl: values.url }),
  tools: [step],
  systemPrompt: 'You are a benchmark.',
  // The mock repeats one call and the tool answers the same: the loop guard (default 3) would
  // rightly end the turn.
  config: { maxRepeatedCalls: 0 },
})

async function oneSession() {
  const session = await agent.createSession()
  const outcome = await session.send('go').outcome
  if (outcome.status !== 'done' || outcome.toolCalls !== steps) {
    throw new Error(`a session ended ${outcome.status}: ${outcome.error}`)
  }
  return outcome.iterations
}

await oneSession() // warm-up
let remaining = Number(values.sessions)
async function worker() {
  let calls = 0
  while (remaining > 0) {
    remaining -= 1
    calls += await oneSession()
  }
  return calls
}
const cpu0 = process.cpuUsage()
const t0 = performance.now()
const counts = await Promise.all(Array.from({ length: Number(values.concurrency) }, worker))
const wall = (performance.now() - t0) / 1000
const cpu = process.cpuUsage(cpu0)
const calls = counts.reduce((a, b) => a + b, 0)
console.log(
  JSON.stringify({
    calls,
    wall_s: wall,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    peak_rss_kib: process.resourceUsage().maxRSS,
  }),
)
agent.close()
