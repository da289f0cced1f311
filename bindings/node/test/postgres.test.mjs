// PostgresStore: a session run and resumed through a second store (another replica), two
// writers to one session, and the errors for a server that is not there. The server comes from
// AGENT_CORE_TEST_POSTGRES_URL: scripts/test-node (and scripts/test) start a throwaway one and
// set it, so these tests run there; by hand without it, the ones needing a server are skipped
// saying so. Each test uses a schema of its own.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { randomUUID } from 'node:crypto'
import { Agent, ConfigError, PostgresStore, ScriptedProvider, StoreError, tool } from '../lib/index.js'

const URL = process.env.AGENT_CORE_TEST_POSTGRES_URL
const needsServer = { skip: !URL && 'needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test-node starts one)' }
const freshSchema = () => `node_${randomUUID().replaceAll('-', '')}`

test('a session runs on PostgreSQL and resumes through another store', needsServer, async () => {
  const schema = freshSchema()
  const store = await PostgresStore.connect(String(URL), { schema, maxConnections: 2 })
  assert.equal(store.schema, schema)
  const remember = tool({ name: 'remember', execute: () => 'remembered tea' })
  const a1 = new Agent({
    provider: new ScriptedProvider([{ toolCalls: [{ name: 'remember', arguments: {} }] }, { text: 'Noted.' }]),
    tools: [remember],
    store,
  })
  const s = await a1.createSession()
  assert.equal((await s.send('I like tea').outcome).status, 'done')
  a1.close()

  // Another replica: its own pool on the same schema.
  const again = await PostgresStore.connect(String(URL), { schema, connectTimeoutMs: 5000 })
  assert.deepEqual(await again.sessionIds(), [s.id])
  const a2 = new Agent({ provider: new ScriptedProvider([{ text: 'You like tea.' }]), store: again })
  const s2 = await a2.openSession(s.id)
  const messages = await s2.messages()
  assert.deepEqual(messages.map((m) => m.message.role), ['user', 'assistant', 'tool', 'assistant'])
  assert.deepEqual(messages.map((m) => m.seq), [1, 2, 3, 4])
  assert.equal(await s2.send('What do I like?').result(), 'You like tea.')
  assert.equal((await s2.messages()).length, 6)
  a2.close()
})

test('two agents writing one session never interleave: the stale one fails with a conflict', needsServer, async () => {
  const schema = freshSchema()
  const first = new Agent({ provider: new ScriptedProvider([{ text: 'one' }]), store: await PostgresStore.connect(String(URL), { schema }) })
  const second = new Agent({ provider: new ScriptedProvider([{ text: 'two' }]), store: await PostgresStore.connect(String(URL), { schema }) })
  const session = await first.createSession()
  const stale = await second.openSession(session.id)
  assert.equal((await session.send('hi').outcome).status, 'done')
  const outcome = await stale.send('hello').outcome
  assert.equal(outcome.status, 'error')
  assert.equal(outcome.errorKind, 'store')
  assert.match(outcome.error, /conflict/)
  const messages = await (await first.openSession(session.id)).messages()
  assert.deepEqual(messages.map((m) => m.message.content[0].text), ['hi', 'one'])
  first.close()
  second.close()
})

test('a server that is not there rejects with a StoreError naming it, without the password', async () => {
  const port = await new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address())
      server.close(() => resolve(port))
    })
  })
  await assert.rejects(
    PostgresStore.connect(`postgres://agent:pw-secret@127.0.0.1:${port}/agents`, { connectTimeoutMs: 2000 }),
    (e) => {
      assert.ok(e instanceof StoreError, String(e))
      assert.equal(e.code, 'store')
      assert.match(e.message, new RegExp(`could not connect to PostgreSQL at 127\\.0\\.0\\.1:${port}`))
      assert.match(e.message, /is the server running/)
      assert.ok(!e.message.includes('pw-secret'), e.message)
      return true
    },
  )
})

test('bad options are refused before connecting', async () => {
  await assert.rejects(PostgresStore.connect('postgres://u@127.0.0.1:1/db', /** @type {any} */ ({ pool: 1 })), (e) => e instanceof ConfigError)
  await assert.rejects(PostgresStore.connect('postgres://u@127.0.0.1:1/db', { schema: 'Drop Table' }), (e) => e instanceof StoreError && /not a plain schema name/.test(e.message))
})
