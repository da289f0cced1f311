// The hostile-input options from Node: page_scrape's address policy, shell_exec's environment,
// fs_write's cap, serveMcp's bearer token and origin check, the MCP client's request timeout
// and the tab hub's held-message cap. Every test keeps the defaults and opts in explicitly.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {
  Agent,
  ConfigError,
  McpClient,
  ScriptedProvider,
  TabHub,
  TabQueueFullError,
  AgentCoreError,
  fsTools,
  newBearerToken,
  pageTools,
  serveMcp,
  tool,
} from '../lib/index.js'
import { collect } from './helpers.mjs'

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'agent-core-node-safety-'))

/** Marks a run without a gate. */
const NO_GATE = Symbol('no gate')

/** Runs one tool call through an agent; returns the call's result event and the outcome. */
async function runOne(tools, name, args, gate = () => true) {
  const provider = new ScriptedProvider([{ toolCalls: [{ name, arguments: args }] }, { text: 'done' }])
  const agent = new Agent(gate === NO_GATE ? { provider, tools: [tools] } : { provider, tools: [tools], gate })
  const run = (await agent.createSession()).send('go')
  const events = await collect(run)
  const outcome = await run.outcome
  agent.close()
  const result = events.find((e) => e.type === 'tool_call_succeeded' || e.type === 'tool_call_failed')
  return { events, outcome, result }
}

/** A port nothing listens on (bound, then released). */
async function freePort() {
  const s = net.createServer()
  await new Promise((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address()
  await new Promise((r) => s.close(r))
  return port
}

const host = {
  evaluate: async () => ({ ok: true }),
  navigate: async () => {},
  tabs: async () => [{ id: 't1', url: 'about:blank', title: '', active: true }],
  openTab: async () => ({ id: 't2', url: 'about:blank', title: '', active: true }),
  closeTab: async () => {},
  activateTab: async () => {},
}

let site
let siteUrl
before(async () => {
  site = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><html><body><p>The fixture page says hello.</p></body></html>')
  })
  await new Promise((r) => site.listen(0, '127.0.0.1', r))
  siteUrl = `http://127.0.0.1:${site.address().port}`
})
after(() => site.close())

test('page_scrape is gated by default', async () => {
  const { outcome, events } = await runOne(pageTools(host, { scrapeLoopbackHttp: true }), 'page_scrape', { url: `${siteUrl}/p` }, NO_GATE)
  assert.equal(outcome.status, 'denied')
  assert.ok(events.some((e) => e.type === 'tool_call_denied'))
})

test('page_scrape refuses loopback by default and fetches it with scrapeLoopbackHttp', async () => {
  let r = await runOne(pageTools(host), 'page_scrape', { url: `${siteUrl}/p` })
  assert.equal(r.result.type, 'tool_call_failed')
  assert.match(r.result.error, /https addresses only/)
  r = await runOne(pageTools(host), 'page_scrape', { url: `https://127.0.0.1:${await freePort()}/` })
  assert.match(r.result.error, /loopback address/)

  r = await runOne(pageTools(host, { scrapeLoopbackHttp: true }), 'page_scrape', { url: `${siteUrl}/p` })
  assert.equal(r.result.type, 'tool_call_succeeded', r.result.error)
  assert.match(r.result.output, /The fixture page says hello\./)
})

test('scrape.allowLoopback / scrape.allowPrivate lift the address check only (https still required)', async () => {
  for (const options of [{ scrape: { allowLoopback: true } }, { scrape: { allowPrivate: true, extraRootsPem: [] } }]) {
    const tools = pageTools(host, options)
    let r = await runOne(tools, 'page_scrape', { url: `https://127.0.0.1:${await freePort()}/` })
    assert.equal(r.result.type, 'tool_call_failed')
    assert.doesNotMatch(r.result.error, /loopback address/)
    r = await runOne(tools, 'page_scrape', { url: `${siteUrl}/p` })
    assert.match(r.result.error, /https addresses only/)
  }
})

test('a bad scrape.extraRootsPem entry makes page_scrape fail, saying so', async () => {
  const tools = pageTools(host, { scrape: { allowLoopback: true, extraRootsPem: ['not a certificate'] } })
  const r = await runOne(tools, 'page_scrape', { url: `https://127.0.0.1:${await freePort()}/` })
  assert.equal(r.result.type, 'tool_call_failed')
  assert.match(r.result.error, /extra root certificate is invalid/)
})

const ECHO = { command: 'echo "secret=${AGENT_CORE_TEST_SECRET:-unset} fixed=${AGENT_CORE_TEST_FIXED:-unset}"' }

test('shell_exec inherits only safe variables by default; shellEnv passes more through', async () => {
  process.env.AGENT_CORE_TEST_SECRET = 's3cret'
  try {
    const root = tmp()
    let r = await runOne(fsTools({ root }), 'shell_exec', ECHO)
    assert.equal(r.result.type, 'tool_call_succeeded', r.result.error)
    assert.match(r.result.output, /secret=unset/)
    assert.doesNotMatch(r.result.output, /s3cret/)

    const shellEnv = { passthrough: ['AGENT_CORE_TEST_SECRET'], set: { AGENT_CORE_TEST_FIXED: 'yes' } }
    r = await runOne(fsTools({ root, shellEnv }), 'shell_exec', ECHO)
    assert.match(r.result.output, /secret=s3cret fixed=yes/)

    r = await runOne(fsTools({ root, shellEnv: { inheritAll: true } }), 'shell_exec', ECHO)
    assert.match(r.result.output, /secret=s3cret fixed=unset/)
  } finally {
    delete process.env.AGENT_CORE_TEST_SECRET
  }
})

test('fs_write over maxWriteBytes is refused', async () => {
  const root = tmp()
  const tools = fsTools({ root, maxWriteBytes: 16 })
  let r = await runOne(tools, 'fs_write', { path: 'big.txt', content: 'x'.repeat(17) })
  assert.equal(r.result.type, 'tool_call_failed')
  assert.match(r.result.error, /cap of 16 bytes/)
  assert.equal(fs.existsSync(path.join(root, 'big.txt')), false)
  r = await runOne(tools, 'fs_write', { path: 'ok.txt', content: 'x'.repeat(16) })
  assert.equal(r.result.type, 'tool_call_succeeded', r.result.error)
})

const shout = tool({
  name: 'shout',
  description: 'Upper-cases text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => text.toUpperCase(),
})

const ping = (url, headers = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  }).then(async (r) => (await r.arrayBuffer(), r.status))

test('serveMcp with a bearer token refuses requests and clients without it', async () => {
  const plain = await serveMcp({ tools: [shout] })
  assert.equal(plain.bearerToken, null)
  await plain.shutdown()

  const server = await serveMcp({ tools: [shout], bearerToken: true })
  try {
    assert.match(server.bearerToken, /^[0-9a-f]{64}$/)
    assert.equal(await ping(server.url), 401)
    assert.equal(await ping(server.url, { Authorization: 'Bearer wrong' }), 401)
    await assert.rejects(McpClient.connect({ alias: 'local', url: server.url, connectTimeoutMs: 10_000 }), AgentCoreError)
    const client = await McpClient.connect({
      alias: 'local',
      url: server.url,
      headers: { Authorization: `Bearer ${server.bearerToken}` },
      requestTimeoutMs: 10_000,
    })
    try {
      assert.deepEqual(client.toolNames, ['local__shout'])
      const r = await runOne(client.tools(), 'local__shout', { text: 'hi' })
      assert.equal(r.outcome.status, 'done')
      assert.match(r.result.output, /HI/)
    } finally {
      await client.close()
    }
  } finally {
    await server.shutdown()
  }
})

test('serveMcp: a fixed token, allowedOrigins, and bad values are ConfigErrors', async () => {
  const token = newBearerToken()
  assert.match(token, /^[0-9a-f]{64}$/)
  assert.notEqual(token, newBearerToken())
  const server = await serveMcp({ tools: [shout], bearerToken: token, allowedOrigins: ['https://app.example.com'] })
  try {
    assert.equal(server.bearerToken, token)
    const auth = { Authorization: `Bearer ${token}` }
    assert.equal(await ping(server.url, { ...auth, Origin: 'https://evil.example' }), 403)
    assert.ok(![401, 403].includes(await ping(server.url, { ...auth, Origin: 'https://app.example.com' })))
  } finally {
    await server.shutdown()
  }
  await assert.rejects(serveMcp({ tools: [shout], bearerToken: 'has spaces' }), ConfigError)
  await assert.rejects(serveMcp({ tools: [shout], allowedOrigins: ['not an origin'] }), ConfigError)
  await assert.rejects(serveMcp({ tools: [shout], bearerToken: 42 }), ConfigError)
})

test('TabHub: maxHeldMessages refuses agent messages past it with TabQueueFullError', async () => {
  const provider = new ScriptedProvider([{ text: 'ok' }, { text: 'ok' }])
  const hub = await TabHub.create({ provider, autoWakeBudget: 0, maxHeldMessages: 2 })
  const tab = await hub.openTab()
  for (const text of ['one', 'two']) {
    const d = await hub.deliver(tab, text, { origin: 'agent' })
    assert.equal(d.status, 'held')
  }
  await assert.rejects(hub.deliver(tab, 'three', { origin: 'agent' }), (e) => {
    assert.ok(e instanceof TabQueueFullError)
    assert.ok(e instanceof AgentCoreError)
    assert.equal(e.code, 'tab_queue_full')
    assert.match(e.message, /max_held_messages/)
    return true
  })
  // The person's messages are never refused.
  const d = await hub.deliver(tab, 'from the person')
  assert.equal(d.status, 'started')
  await d.run.outcome
})
