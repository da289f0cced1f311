import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  Agent,
  OpenAICompatible,
  ScriptedProvider,
  SqliteStore,
  PostgresStore,
  ConfigError,
  SessionExistsError,
  fsTools,
  pageTools,
  tool,
  HostError,
} from '../lib/index.js'
import { startMockOpenAI } from './mock-openai.mjs'
import { collect, toolResults } from './helpers.mjs'

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'agent-core-node-'))

test('the OpenAI-compatible adapter against a local HTTP server (streaming and not)', async () => {
  for (const streaming of [true, false]) {
    const mock = await startMockOpenAI({ rounds: 2 })
    try {
      const seenArgs = []
      const noop = tool({
        name: 'noop',
        parameters: { type: 'object', properties: { n: { type: 'integer' } } },
        execute: ({ n }) => (seenArgs.push(n), 'ok'),
      })
      const provider = new OpenAICompatible({ model: 'mock-model', apiKey: 'sk-test', baseUrl: mock.baseUrl, streaming })
      assert.equal(provider.id, 'openai-compatible')
      assert.equal(provider.model, 'mock-model')
      const agent = new Agent({ provider, tools: [noop], systemPrompt: 'sys' })
      const run = (await agent.createSession()).send('go')
      const events = await collect(run)
      const o = await run.outcome
      assert.equal(o.status, 'done', o.error ?? '')
      assert.equal(o.finalText, 'All done.')
      assert.equal(o.iterations, 3)
      assert.deepEqual(seenArgs, [0, 1])
      assert.equal(o.usage.inputTokens, 10 + 10 + 12)
      assert.equal(mock.seen.length, 3)
      const first = mock.seen[0]
      assert.equal(first.url, '/v1/chat/completions')
      assert.equal(first.headers.authorization, 'Bearer sk-test')
      assert.equal(first.body.model, 'mock-model')
      assert.equal(first.body.messages[0].role, 'system')
      assert.equal(first.body.tools[0].function.name, 'noop')
      if (streaming) assert.ok(events.filter((e) => e.type === 'content_token').length >= 2)
    } finally {
      await mock.close()
    }
  }
})

test('an unreachable provider ends the turn with a provider error kind', async () => {
  const provider = new OpenAICompatible({ model: 'm', baseUrl: 'http://127.0.0.1:9/v1', http: { maxAttempts: 1 } })
  const o = await (await new Agent({ provider }).createSession()).send('x').outcome
  assert.equal(o.status, 'error')
  assert.match(o.errorKind, /^provider\./)
  assert.throws(() => new OpenAICompatible({}), ConfigError)
})

test('createSession: at once in memory, through a promise when the store makes it wait; errors reject either way', async () => {
  const id = '5d0f2a3b-8c4e-4f6a-9b1c-2d3e4f5a6b7c'
  // In memory the native call answers with the session itself (no round trip through the
  // runtime); a store that waits for its commit answers with a promise.
  const waiting = await SqliteStore.open(path.join(tmp(), 'wait.db'), { writeBehind: false })
  for (const store of [undefined, waiting]) {
    const agent = new Agent({ provider: new ScriptedProvider([{ text: 'one' }, { text: 'two' }]), store })
    const first = await agent.createSession({ id })
    assert.equal(first.id, id)
    await assert.rejects(agent.createSession({ id }), SessionExistsError)
    await assert.rejects(agent.createSession({ id: 'not-a-uuid' }), (e) => e instanceof ConfigError)
    const other = await agent.createSession()
    assert.notEqual(other.id, id)
    assert.equal((await first.send('hi').outcome).status, 'done')
    assert.equal((await other.send('hi').outcome).status, 'done')
    agent.close()
  }
  assert.deepEqual((await waiting.sessionIds()).includes(id), true)
})

test('the SQLite store keeps sessions across agents and files', async () => {
  const dir = tmp()
  const file = path.join(dir, 'sessions.db')
  const store = await SqliteStore.open(file)
  assert.equal(store.path, file)
  const a1 = new Agent({ provider: new ScriptedProvider([{ text: 'stored answer' }]), store })
  const s = await a1.createSession()
  await s.send('remember me').outcome
  a1.close()
  // Another store object over the same file, as after a restart.
  const again = await SqliteStore.open(file)
  assert.deepEqual(await again.sessionIds(), [s.id])
  const a2 = new Agent({ provider: new ScriptedProvider([{ text: 'second' }]), store: again })
  const s2 = await a2.openSession(s.id)
  const messages = await s2.messages()
  assert.deepEqual(
    messages.map((m) => m.message.role),
    ['user', 'assistant'],
  )
  assert.equal(messages[1].message.content[0].text, 'stored answer')
  assert.ok(fs.statSync(file).size > 0)
  await assert.rejects(SqliteStore.open(path.join(dir, 'missing-dir', 'x', 'y.db')), (e) => e.code === 'store')
})

test('a SQLite store opens from a file: URL, and refuses a path that is not one or a string', async () => {
  const file = path.join(tmp(), 'from-url.db')
  const store = await SqliteStore.open(pathToFileURL(file))
  assert.equal(store.path, file)
  assert.ok(fs.existsSync(file))
  const before = fs.readdirSync(process.cwd())
  for (const bad of [undefined, null, 42, { path: file }, new URL('http://127.0.0.1/x.db')]) {
    await assert.rejects(
      SqliteStore.open(bad),
      (e) => e instanceof ConfigError && e.code === 'invalid_argument' && /SqliteStore\.open: `path` must be/.test(e.message),
      String(bad),
    )
  }
  await assert.rejects(
    SqliteStore.open(new URL('file://elsewhere.example/x.db')),
    (e) => e instanceof ConfigError && e.code === 'invalid_argument' && /SqliteStore\.open: /.test(e.message),
  )
  // Nothing was created for them: no file named "undefined" or "null" where the test runs.
  assert.deepEqual(fs.readdirSync(process.cwd()), before)
  await assert.rejects(
    PostgresStore.connect(undefined),
    (e) => e instanceof ConfigError && e.code === 'invalid_argument' && /PostgresStore\.connect: `url` must be/.test(e.message),
  )
})

test('a capped SQLite store ends the turn with a clear store error and keeps what was saved', async () => {
  const dir = tmp()
  const file = path.join(dir, 'capped.db')
  await SqliteStore.open(file) // the schema alone
  const schemaBytes = fs.statSync(file).size
  const store = await SqliteStore.open(file, { maxSizeBytes: schemaBytes + 160 * 1024, groupCommitDelayMs: 1 })
  const bulky = tool({ name: 'bulky', execute: () => 'x'.repeat(6000) })
  const steps = []
  for (let i = 0; i < 100; i++) steps.push({ toolCalls: [{ name: 'bulky', arguments: {} }] }, { text: 'done' })
  const agent = new Agent({ provider: new ScriptedProvider(steps), tools: [bulky], store })
  const session = await agent.createSession()
  let done = 0
  let outcome
  for (;;) {
    outcome = await session.send(`turn ${done}`).outcome
    if (outcome.status !== 'done') break
    done += 1
    assert.ok(done < 100, 'the cap never took effect')
  }
  assert.ok(done >= 2, `only ${done} turns fitted`)
  assert.equal(outcome.status, 'error')
  assert.equal(outcome.errorKind, 'store')
  assert.match(outcome.error, /database or disk is full/)
  agent.close()

  // With room again, every finished turn is there and the session goes on.
  const roomy = await SqliteStore.open(file, { writeBehind: false })
  const again = new Agent({ provider: new ScriptedProvider([{ text: 'again' }]), store: roomy })
  const resumed = await again.openSession(session.id)
  const users = (await resumed.messages()).filter((m) => m.message.role === 'user').map((m) => m.message.content[0].text)
  assert.deepEqual(users.slice(0, done), Array.from({ length: done }, (_, i) => `turn ${i}`))
  assert.equal((await resumed.send('with room').outcome).status, 'done')
  await assert.rejects(SqliteStore.open(file, { durability: 'sometimes' }), (e) => e.code === 'invalid_argument')
})

test('fs and shell tools: confined to a root, writes gated', async () => {
  const dir = tmp()
  fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello from disk')
  const tools = fsTools({ root: dir })
  assert.deepEqual(tools.names.sort(), ['fs_delete', 'fs_list', 'fs_mkdir', 'fs_read', 'fs_write', 'shell_exec'])
  assert.deepEqual(
    tools.specs.filter((s) => s.gated).map((s) => s.name).sort(),
    ['fs_delete', 'fs_write', 'shell_exec'],
  )
  const asked = []
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: 'fs_read', arguments: { path: 'hello.txt' } }] },
    { toolCalls: [{ name: 'fs_write', arguments: { path: 'out.txt', content: 'written' } }] },
    { toolCalls: [{ name: 'fs_read', arguments: { path: '../outside.txt' } }] },
    { text: 'done' },
  ])
  const agent = new Agent({ provider, tools: [tools], gate: (r) => (asked.push(r.tool), true) })
  const o = await (await agent.createSession()).send('go').outcome
  assert.equal(o.status, 'done', o.error ?? '')
  assert.deepEqual(asked, ['fs_write'])
  assert.equal(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8'), 'written')
  const results = toolResults(provider)
  assert.match(results[0].content[0].text, /hello from disk/)
  assert.equal(results[2].isError, true)
  assert.throws(() => fsTools({}), ConfigError)
  const ungated = fsTools({ root: dir }).withGated(['fs_write'], false)
  assert.equal(ungated.specs.find((s) => s.name === 'fs_write').gated, false)
})

test('page tools over a JS BrowserHost: calls reach the host; host errors are typed', async () => {
  const calls = []
  const host = {
    evaluate: async (expression, tab) => (calls.push(['evaluate', tab]), 'complete'),
    navigate: async (url, tab) => {
      calls.push(['navigate', url, tab])
      if (url.includes('broken')) throw new HostError('net::ERR_NAME_NOT_RESOLVED', 'navigation')
    },
    tabs: async () => [{ id: 'T1', url: 'http://127.0.0.1/a', title: 'A page', active: true }],
    openTab: async (url) => ({ id: 'T2', url: url ?? 'about:blank', title: '', active: false }),
    closeTab: async (tab) => void calls.push(['closeTab', tab]),
    activateTab: async (tab) => void calls.push(['activateTab', tab]),
  }
  const tools = pageTools(host, { settleTimeoutMs: 200 })
  assert.ok(tools.names.includes('page_read'))
  assert.ok(tools.names.includes('tabs_list'))
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: 'tabs_list' }] },
    { toolCalls: [{ name: 'page_navigate', arguments: { url: 'http://127.0.0.1:1/ok' } }] },
    { toolCalls: [{ name: 'page_navigate', arguments: { url: 'http://127.0.0.1:1/broken' } }] },
    { text: 'done' },
  ])
  const agent = new Agent({ provider, tools: [tools], gate: () => true })
  const run = (await agent.createSession()).send('go')
  const o = await run.outcome
  assert.equal(o.status, 'done', o.error ?? '')
  const results = toolResults(provider)
  assert.match(results[0].content[0].text, /A page/)
  assert.ok(calls.some((c) => c[0] === 'navigate' && c[1] === 'http://127.0.0.1:1/ok'))
  assert.equal(results[2].isError, true)
  assert.match(results[2].content[0].text, /ERR_NAME_NOT_RESOLVED/)
  // A disconnected host ends the turn.
  const dead = { ...host, tabs: async () => { throw new HostError('browser gone', 'disconnected') } }
  const p2 = new ScriptedProvider([{ toolCalls: [{ name: 'tabs_list' }] }, { text: 'never' }])
  const o2 = await (await new Agent({ provider: p2, tools: [pageTools(dead)] }).createSession()).send('go').outcome
  assert.equal(o2.status, 'error')
  assert.match(o2.error, /browser gone/)
  assert.throws(() => pageTools({}), ConfigError)
})

test('the key store encrypts through a JS Crypt and never stores plaintext', async () => {
  const { KeyStore, StoreError } = await import('../lib/index.js')
  const dir = tmp()
  const file = path.join(dir, 'keys.db')
  const store = await SqliteStore.open(file)
  let available = true
  const crypt = {
    isEncryptionAvailable: () => available,
    // A toy reversible cipher (XOR): enough to show the bytes stored are not the key.
    encryptString: (text) => Buffer.from(text, 'utf8').map((b) => b ^ 0x5a),
    decryptString: (bytes) => Buffer.from(bytes).map((b) => b ^ 0x5a).toString('utf8'),
  }
  const keys = KeyStore.create(store, crypt)
  assert.ok(keys.providers.length > 0)
  const provider = keys.providers[0]
  await keys.setKey(provider, '  sk-secret-123\n')
  assert.equal(await keys.getKey(provider), 'sk-secret-123')
  const st = await keys.status()
  assert.deepEqual(st.find((s) => s.provider === provider), { provider, usable: true, stored: true })
  assert.ok(!fs.readFileSync(file).includes('sk-secret-123'), 'no plaintext in the database file')
  await assert.rejects(keys.setKey('nope', 'x'), (e) => e.code === 'invalid_argument')
  available = false
  await assert.rejects(keys.setKey(provider, 'sk-other'), (e) => e instanceof StoreError && e.code === 'encryption_unavailable')
  await keys.clearKey(provider)
  assert.equal(await keys.getKey(provider), null)
})

test('a fallback router moves to the next provider after a retryable failure', async () => {
  const { FallbackRouter } = await import('../lib/index.js')
  const primary = new ScriptedProvider([{ error: { kind: 'server', status: 503, message: 'overloaded' } }])
  const backup = new ScriptedProvider([{ text: 'from the backup' }])
  const router = new FallbackRouter(primary, backup)
  assert.equal(router.id, 'router')
  const run = (await new Agent({ provider: router }).createSession()).send('x')
  const o = await run.outcome
  assert.equal(o.status, 'done')
  assert.equal(o.finalText, 'from the backup')
  assert.equal(primary.callCount, 1)
  assert.equal(backup.callCount, 1)
})
