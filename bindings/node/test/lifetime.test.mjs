import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import fs from 'node:fs'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const lib = path.join(root, 'lib', 'index.js')

/** Runs a script in a fresh Node process and returns its result. */
function node(source, timeout = 20_000) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8', timeout })
}

test('the module used only in worker threads, one after another, runs a turn in each', () => {
  // The first thread to allocate through the module's allocator was taken for the process's
  // main thread: once that worker had exited, the third worker to load the module crashed
  // (SIGSEGV) in the allocator's set-up of its thread.
  const r = node(`
    import { Worker } from 'node:worker_threads'
    const code = \`
      const { parentPort } = require('node:worker_threads')
      const { Agent, ScriptedProvider, tool } = require(${JSON.stringify(lib)})
      const echo = tool({ name: 'echo', execute: ({ text }) => text })
      ;(async () => {
        const provider = new ScriptedProvider([{ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] }, { text: 'done' }])
        const agent = new Agent({ provider, tools: [echo] })
        const outcome = await (await agent.createSession()).send('go').outcome
        parentPort.postMessage(outcome.status + ' ' + outcome.toolCalls)
      })()
    \`
    for (let i = 0; i < 4; i++) {
      const answer = await new Promise((resolve, reject) => {
        // execArgv: not this script's --input-type=module, so the code is CommonJS.
        const worker = new Worker(code, { eval: true, execArgv: [] })
        worker.once('message', (m) => worker.terminate().then(() => resolve(m)))
        worker.once('error', reject)
      })
      console.log('worker', i, answer)
    }
  `)
  assert.equal(r.status, 0, `${r.signal ?? ''} ${r.stderr}`)
  assert.deepEqual(r.stdout.trim().split('\n'), [0, 1, 2, 3].map((i) => `worker ${i} done 1`))
})

test('callbacks do not keep the process alive; the process exits on its own', () => {
  const r = node(`
    import { Agent, ScriptedProvider, tool } from ${JSON.stringify(lib)}
    const agent = new Agent({
      provider: new ScriptedProvider([{ hang: 'forever' }]),
      tools: [tool({ name: 't', execute: () => 'x' })],
      gate: () => true,
      onEvent: () => {},
    })
    const s = await agent.createSession()
    s.send('go')
    console.log('left running')
  `)
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /left running/)
})

test('a closed agent lets the process exit even with a turn that was in flight', () => {
  const r = node(`
    import { Agent, ScriptedProvider } from ${JSON.stringify(lib)}
    const agent = new Agent({ provider: new ScriptedProvider([{ hang: '' }]), onEvent: () => {} })
    const run = (await agent.createSession()).send('go')
    agent.close()
    console.log((await run.outcome).status)
  `)
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'cancelled')
})

test('throwing callbacks never crash the process', () => {
  const r = node(`
    import { Agent, ScriptedProvider, tool } from ${JSON.stringify(lib)}
    const bad = tool({ name: 'bad', gated: true, execute: () => { throw undefined } })
    const worse = tool({ name: 'worse', execute: () => Promise.reject(null) })
    const agent = new Agent({
      provider: new ScriptedProvider([
        { toolCalls: [{ name: 'worse' }] },
        { toolCalls: [{ name: 'bad' }] },
      ]),
      tools: [bad, worse],
      gate: () => { throw new Error('gate down') },
      onEvent: () => { throw new Error('observer down') },
    })
    const o = await (await agent.createSession()).send('go').outcome
    console.log(o.status)
  `)
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'denied')
  assert.match(r.stderr, /onEvent threw: observer down/)
})

test('the README quickstart runs as written', () => {
  const r = spawnSync(process.execPath, [path.join(root, 'examples', 'quickstart.mjs')], {
    encoding: 'utf8',
    timeout: 20_000,
  })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout, 'tool echo -> echo: hi\ndone: The tool said hi.\n')
})

test("the README's Node quickstart is examples/quickstart.mjs, verbatim", () => {
  const readme = fs.readFileSync(path.join(root, '..', '..', 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('\n## Node'))
  assert.notEqual(readme.indexOf('\n## Node'), -1, 'README.md has a ## Node section')
  const block = section.match(/```js\n([\s\S]*?)```/)
  assert.ok(block, 'the Node section has a js code block')
  assert.equal(block[1], fs.readFileSync(path.join(root, 'examples', 'quickstart.mjs'), 'utf8'))
})

test("the README's human-control example is examples/human_control.mjs, verbatim, and runs", () => {
  const readme = fs.readFileSync(path.join(root, '..', '..', 'README.md'), 'utf8')
  const at = readme.indexOf('\n## Human control')
  assert.notEqual(at, -1, 'README.md has a ## Human control section')
  const section = readme.slice(at + 1, readme.indexOf('\n## ', at + 1))
  const block = section.match(/```js\n([\s\S]*?)```/)
  assert.ok(block, 'the section has a js code block')
  const file = path.join(root, 'examples', 'human_control.mjs')
  assert.equal(block[1], fs.readFileSync(file, 'utf8'))
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout, 'done Paid invoice 42.\n')
})

test("the README's typed-answer example is examples/typed_answer.mjs, verbatim, and runs", () => {
  const readme = fs.readFileSync(path.join(root, '..', '..', 'README.md'), 'utf8')
  const at = readme.indexOf('\n## Typed final answers')
  assert.notEqual(at, -1, 'README.md has a ## Typed final answers section')
  const section = readme.slice(at + 1, readme.indexOf('\n## ', at + 1))
  const block = section.match(/```js\n([\s\S]*?)```/)
  assert.ok(block, 'the section has a js code block')
  const file = path.join(root, 'examples', 'typed_answer.mjs')
  assert.equal(block[1], fs.readFileSync(file, 'utf8'))
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout, 'Paris 21 sunny\n')
})
