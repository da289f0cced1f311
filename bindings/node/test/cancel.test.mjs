import { test } from 'node:test'
import assert from 'node:assert/strict'
import { tool, ClosedError } from '../lib/index.js'
import { collect, scripted, until } from './helpers.mjs'

/** A JS tool that waits until its signal aborts (or 30 s), recording what happened. */
function slowTool() {
  const state = { started: false, aborted: false }
  const t = tool({
    name: 'slow',
    execute: (_args, cx) =>
      new Promise((resolve) => {
        state.started = true
        const timer = setTimeout(() => resolve('finished'), 30_000)
        cx.signal.addEventListener('abort', () => {
          state.aborted = true
          clearTimeout(timer)
          resolve('aborted')
        })
      }),
  })
  return { t, state }
}

test('run.cancel() during a slow JS tool ends the run cancelled and aborts the tool', async () => {
  const { t, state } = slowTool()
  const { agent } = scripted([{ toolCalls: [{ name: 'slow' }] }, { text: 'never' }], { tools: [t] })
  const run = (await agent.createSession()).send('go')
  await until(() => state.started)
  const t0 = Date.now()
  run.cancel()
  const o = await run.outcome
  assert.equal(o.status, 'cancelled')
  assert.ok(Date.now() - t0 < 5000)
  await until(() => state.aborted)
  assert.equal(run.status().state, 'cancelled')
})

test('an AbortSignal cancels a turn during a slow JS tool', async () => {
  const { t, state } = slowTool()
  const { agent } = scripted([{ toolCalls: [{ name: 'slow' }] }, { text: 'never' }], { tools: [t] })
  const controller = new AbortController()
  const run = (await agent.createSession()).send('go', { signal: controller.signal })
  await until(() => state.started)
  controller.abort()
  const events = await collect(run)
  assert.equal(events.at(-1).type, 'run_cancelled')
  assert.equal((await run.outcome).status, 'cancelled')
  await until(() => state.aborted)
})

test("a tool that reads its signal only after the cancel finds it aborted, with the cancel's reason", async () => {
  const state = { started: false, signal: undefined }
  let release = () => {}
  const t = tool({
    name: 'late',
    execute: async (_args, cx) => {
      state.started = true
      await new Promise((resolve) => (release = resolve))
      state.signal = cx.signal
      return 'done'
    },
  })
  const { agent } = scripted([{ toolCalls: [{ name: 'late' }] }, { text: 'never' }], { tools: [t] })
  const run = (await agent.createSession()).send('go')
  await until(() => state.started)
  run.cancel()
  assert.equal((await run.outcome).status, 'cancelled')
  release()
  await until(() => state.signal !== undefined)
  assert.equal(state.signal.aborted, true)
  assert.equal(state.signal.reason.code, 'cancelled')
})

test('an AbortSignal cancels a turn during a slow model call', async () => {
  const { agent } = scripted([{ hang: 'thinking about it' }])
  const controller = new AbortController()
  const run = (await agent.createSession()).send('go', { signal: controller.signal })
  await until(() => run.status().state === 'thinking')
  setTimeout(() => controller.abort(), 50)
  const o = await run.outcome
  assert.equal(o.status, 'cancelled')
  await assert.rejects(run.result(), (e) => e.code === 'cancelled')
})

test('AbortSignal.timeout works as a deadline for a delayed model', async () => {
  const { agent } = scripted([{ delayMs: 30_000, then: { text: 'late' } }])
  const run = (await agent.createSession()).send('go', { signal: AbortSignal.timeout(100) })
  assert.equal((await run.outcome).status, 'cancelled')
})

test('an already aborted signal is honoured: the turn ends cancelled before any model call', async () => {
  const { agent, provider } = scripted([{ text: 'should not be used' }])
  const run = (await agent.createSession()).send('go', { signal: AbortSignal.abort() })
  const o = await run.outcome
  assert.equal(o.status, 'cancelled')
  assert.equal(o.iterations, 0)
  assert.equal(provider.callCount, 0)
})

test('cancelling a finished run changes nothing', async () => {
  const { agent } = scripted([{ text: 'done' }])
  const run = (await agent.createSession()).send('go')
  await run.outcome
  run.cancel()
  assert.equal((await run.outcome).status, 'done')
})

test('close() cancels running turns and refuses new ones', async () => {
  const { t, state } = slowTool()
  const { agent } = scripted([{ toolCalls: [{ name: 'slow' }] }], { tools: [t] })
  const s = await agent.createSession()
  const run = s.send('go')
  await until(() => state.started)
  agent.close()
  assert.equal(agent.closed, true)
  assert.equal((await run.outcome).status, 'cancelled')
  await until(() => state.aborted)
  assert.throws(() => s.send('again'), (e) => e instanceof ClosedError && e.code === 'closed')
  await assert.rejects(agent.createSession(), ClosedError)
})
