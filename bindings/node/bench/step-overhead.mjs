// Per-step overhead of the Node binding with a JS no-op tool.
//
//   node bench/step-overhead.mjs            (after `npm run build`: release build)
//
// 1. In-process: the scripted provider asks for the no-op tool N times in one turn; per step =
//    one model call + one JS tool call through the binding. Then the same with ~1 KB of JSON
//    arguments and result per call and the events read in JS (the values crossing napi).
// 2. Whole process: the OpenAI-compatible adapter against a local mock server running in a
//    separate Node process (HTTP + SSE over loopback); per model call = wall time / model calls.
import { spawn } from 'node:child_process'
import http from 'node:http'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { Agent, OpenAICompatible, ScriptedProvider, tool } from '../lib/index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const noop = tool({ name: 'noop', parameters: { type: 'object', properties: { n: { type: 'integer' } } }, execute: () => 'ok' })
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

// Turns of `steps` tool calls plus a final answer, each in a fresh session (so the history,
// which every model call carries, stays as short as in a real turn).
async function inProcess(turns, steps, repeats) {
  const per = []
  for (let r = 0; r < repeats; r++) {
    const script = []
    for (let t = 0; t < turns; t++) {
      for (let i = 0; i < steps; i++) script.push({ toolCalls: [{ name: 'noop', arguments: { n: i } }] })
      script.push({ text: 'done' })
    }
    const agent = new Agent({ provider: new ScriptedProvider(script, { recordRequests: false }), tools: [noop] })
    const t0 = performance.now()
    for (let t = 0; t < turns; t++) {
      const o = await (await agent.createSession()).send('go').outcome
      if (o.status !== 'done') throw new Error(`run ended ${o.status}: ${o.error}`)
    }
    per.push((performance.now() - t0) / (turns * (steps + 1)))
    agent.close()
  }
  return median(per)
}

// The same with values that cross the binding: ~1 KB of arguments in, the same back as the
// result, and every event read through the async iterator.
const items = Array.from({ length: 12 }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 1.25, tags: ['a', 'b'], ok: i % 2 === 0 }))
const shape = tool({ name: 'shape', parameters: { type: 'object' }, execute: (args) => ({ count: args.items.length, items: args.items }) })
async function inProcessJson(turns, steps, repeats) {
  const per = []
  for (let r = 0; r < repeats; r++) {
    const script = []
    for (let t = 0; t < turns; t++) {
      for (let i = 0; i < steps; i++) script.push({ toolCalls: [{ name: 'shape', arguments: { step: i, items } }] })
      script.push({ text: 'done' })
    }
    const agent = new Agent({ provider: new ScriptedProvider(script, { recordRequests: false }), tools: [shape] })
    const t0 = performance.now()
    for (let t = 0; t < turns; t++) {
      const run = (await agent.createSession()).send('go')
      let events = 0
      for await (const _ of run.events()) events++
      const o = await run.outcome
      if (o.status !== 'done' || events === 0) throw new Error(`run ended ${o.status}: ${o.error}`)
    }
    per.push((performance.now() - t0) / (turns * (steps + 1)))
    agent.close()
  }
  return median(per)
}

let mockCost = 0

// The project's Rust mock server (benches/src/bin/mock-llm.rs), when built:
// cargo build --release -p agent-bench --bin mock-llm
const mockLlm =
  process.env.AGENT_MOCK_LLM ??
  path.join(process.env.CARGO_TARGET_DIR ?? path.join(here, '..', '..', '..', 'target'), 'release', 'mock-llm')

async function wholeProcess(calls, repeats, rust = false) {
  const server = rust
    ? spawn(mockLlm, ['--port', '0', '--tool-steps', String(calls - 1), '--tool', 'noop', '--args', '{"n":1}'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
    : spawn(process.execPath, [path.join(here, '..', 'test', 'mock-openai.mjs'), String(calls - 1)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
  const baseUrl = await new Promise((resolve) =>
    server.stdout.once('data', (d) => resolve(String(d).trim().replace(/^listening on /, ''))),
  )
  try {
    // The mock's own cost: the same request from a bare Node HTTP client (keep-alive).
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const body = JSON.stringify({ model: 'mock', stream: true, messages: [{ role: 'user', content: 'go' }], tools: [] })
    const once = () =>
      new Promise((resolve, reject) => {
        const req = http.request(`${baseUrl}/chat/completions`, { method: 'POST', agent: keepAlive, headers: { 'content-type': 'application/json' } }, (res) => {
          res.on('data', () => {})
          res.on('end', resolve)
        })
        req.on('error', reject)
        req.end(body)
      })
    for (let i = 0; i < 100; i++) await once()
    const m0 = performance.now()
    for (let i = 0; i < 1000; i++) await once()
    mockCost = (performance.now() - m0) / 1000
    keepAlive.destroy()
    const provider = new OpenAICompatible({ model: 'mock', baseUrl })
    const per = []
    for (let r = 0; r < repeats; r++) {
      const agent = new Agent({ provider, tools: [noop], config: { maxIterations: calls + 1, maxRepeatedCalls: 0 } }) // the mock repeats one call
      const session = await agent.createSession()
      const t0 = performance.now()
      const o = await session.send('go').outcome
      const ms = performance.now() - t0
      if (o.status !== 'done' || o.iterations !== calls) throw new Error(`run ended ${o.status} after ${o.iterations}: ${o.error}`)
      per.push(ms / calls)
      agent.close()
    }
    return median(per)
  } finally {
    server.kill()
  }
}

await inProcess(20, 10, 2) // warm up
const a = await inProcess(100, 10, 7)
console.log(`in-process, scripted provider + JS no-op tool: ${(a * 1000).toFixed(1)} µs per step (median of 7 runs of 100 turns x 11 model calls)`)
await inProcessJson(20, 10, 2) // warm up
const j = await inProcessJson(100, 10, 7)
console.log(`in-process, ~1 KB JSON arguments and result, events iterated: ${(j * 1000).toFixed(1)} µs per step (median of 7 runs of 100 turns x 11 model calls)`)
await wholeProcess(11, 3) // warm up
const b = await wholeProcess(11, 30)
console.log(`whole process, OpenAI-compatible adapter vs local mock server (SSE): ${b.toFixed(3)} ms per model call (median of 30 turns of 11 calls)`)
console.log(`  the same mock from a bare Node HTTP client (keep-alive): ${mockCost.toFixed(3)} ms per request`)
if (fs.existsSync(mockLlm)) {
  await wholeProcess(11, 3, true) // warm up
  const c = await wholeProcess(11, 30, true)
  console.log(`whole process, OpenAI-compatible adapter vs the Rust mock-llm server: ${c.toFixed(3)} ms per model call (median of 30 turns of 11 calls)`)
  console.log(`  the same mock from a bare Node HTTP client (keep-alive): ${mockCost.toFixed(3)} ms per request`)
} else {
  console.log(`(build ${mockLlm} with \`cargo build --release -p agent-bench --bin mock-llm\` to also measure against the Rust mock)`)
}
