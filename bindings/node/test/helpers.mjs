// Shared helpers for the node:test suites.
import { Agent, ScriptedProvider, tool } from '../lib/index.js'

/** Collects every event of a run. */
export async function collect(run) {
  const events = []
  for await (const ev of run.events()) events.push(ev)
  return events
}

/** A tool that echoes its `text` argument. */
export const echo = tool({
  name: 'echo',
  description: 'Echoes text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => `echo: ${text}`,
})

/** An agent over a scripted provider. */
export function scripted(steps, options = {}) {
  const provider = new ScriptedProvider(steps)
  const agent = new Agent({ provider, ...options })
  return { agent, provider }
}

/** A promise that resolves after `ms`. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Waits until `cond()` is true (polling), or fails after `ms`. */
export async function until(cond, ms = 5000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time')
    await sleep(5)
  }
}

/** The tool-result messages of the last request a scripted provider received. */
export function toolResults(provider) {
  const requests = provider.requests()
  const last = requests.at(-1)
  return last ? last.messages.filter((m) => m.role === 'tool') : []
}
