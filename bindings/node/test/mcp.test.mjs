// MCP both ways: the reference server `@modelcontextprotocol/server-everything` (stdio) as a
// client, and serveMcp's loopback HTTP endpoint connected back to by McpClient.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, McpClient, ScriptedProvider, fsTools, serveMcp, tool } from '../lib/index.js'
import { toolResults } from './helpers.mjs'

/** The reference server's entry script; the suite fails (never skips) without it. */
function everythingEntry() {
  const entry = process.env.AGENT_MCP_EVERYTHING
  if (!entry || !existsSync(entry)) {
    assert.fail(
      'AGENT_MCP_EVERYTHING is not set (or missing): run `source scripts/lib/ensure-mcp-peers.sh && ensure_mcp_peers` ' +
        '(scripts/lib/ensure-mcp-peers.sh installs @modelcontextprotocol/server-everything and exports it)',
    )
  }
  return entry
}

const connectEverything = () =>
  McpClient.connect({ alias: 'everything', command: process.execPath, args: [everythingEntry(), 'stdio'] })

test('McpClient over stdio lists server-everything tools as alias__tool', async () => {
  const client = await connectEverything()
  try {
    assert.equal(client.alias, 'everything')
    assert.ok(client.toolNames.includes('everything__echo'), client.toolNames.join(', '))
    const set = client.tools()
    assert.deepEqual(set.names, client.toolNames)
    const echo = set.specs.find((s) => s.name === 'everything__echo')
    assert.equal(echo.gated, true)
    assert.ok(echo.parameters.properties.message)
    const info = await client.serverInfo()
    assert.ok(info && typeof info.protocolVersion === 'string')
    assert.equal(await client.isConnected(), true)
  } finally {
    await client.close()
  }
  assert.equal(await client.isConnected(), false)
})

test('an agent run calls everything__echo through the gate', async () => {
  const client = await connectEverything()
  try {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'everything__echo', arguments: { message: 'hello mcp' } }] },
      { text: 'echoed' },
    ])
    const asked = []
    const agent = new Agent({
      provider,
      tools: [client.tools()],
      gate: (req) => (asked.push(req.tool), req.tool === 'everything__echo'),
    })
    const o = await (await agent.createSession()).send('echo it').outcome
    assert.equal(o.status, 'done', JSON.stringify(o))
    assert.equal(o.finalText, 'echoed')
    assert.deepEqual(asked, ['everything__echo'])
    const [result] = toolResults(provider)
    assert.notEqual(result.isError, true)
    assert.match(result.content[0].text, /hello mcp/)
    agent.close()
  } finally {
    await client.close()
  }
})

test('connect errors are AgentCoreErrors: bad options and a missing program', async () => {
  await assert.rejects(McpClient.connect({ alias: 'x' }), (e) => e.code === 'invalid_argument')
  await assert.rejects(McpClient.connect({ alias: 'a__b', command: 'true' }), (e) => e.code === 'mcp')
  await assert.rejects(
    McpClient.connect({ alias: 'missing', command: '/nonexistent/agent-core-mcp-server', connectTimeoutMs: 5000 }),
    (e) => e.code === 'mcp',
  )
})

test('serveMcp round trip over loopback HTTP: Rust and JS tools, the gate denies a gated tool', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-core-mcp-'))
  writeFileSync(join(dir, 'note.txt'), 'served over MCP')
  let jsRuns = 0
  const shout = tool({
    name: 'shout',
    description: 'Upper-cases text.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    execute: ({ text }) => (jsRuns++, text.toUpperCase()),
  })
  const serverAsked = []
  const server = await serveMcp({
    tools: [fsTools({ root: dir }), shout],
    gate: (req) => (serverAsked.push(req.tool), req.tool !== 'fs_write'),
    name: 'node-test',
  })
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  const client = await McpClient.connect({ alias: 'local', url: server.url })
  try {
    assert.ok(client.toolNames.includes('local__fs_read'))
    assert.ok(client.toolNames.includes('local__shout'))
    assert.equal((await client.serverInfo()).name, 'node-test')
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'local__fs_read', arguments: { path: 'note.txt' } }] },
      { toolCalls: [{ name: 'local__shout', arguments: { text: 'loud' } }] },
      { toolCalls: [{ name: 'local__fs_write', arguments: { path: 'evil.txt', content: 'x' } }] },
      { text: 'done' },
    ])
    // The client side allows every remote tool; the server's gate has the last word.
    const agent = new Agent({ provider, tools: [client.tools()], gate: () => true })
    const o = await (await agent.createSession()).send('go').outcome
    assert.equal(o.status, 'done', JSON.stringify(o))
    const [read, loud, write] = toolResults(provider)
    assert.match(read.content[0].text, /served over MCP/)
    assert.notEqual(read.isError, true)
    // What an MCP server returns reaches the model as data, inside untrusted-content markers.
    assert.match(loud.content[0].text, /^\[untrusted data from MCP server "local" tool shout[^\n]*\]\n<untrusted-content nonce="([0-9a-f]+)">\nLOUD\n<\/untrusted-content nonce="\1">$/)
    assert.equal(jsRuns, 1)
    assert.equal(write.isError, true)
    assert.match(write.content[0].text, /denied|not allowed|gate/i)
    assert.equal(existsSync(join(dir, 'evil.txt')), false)
    assert.deepEqual(serverAsked, ['fs_write'])
    agent.close()
  } finally {
    await client.close()
    await server.shutdown()
  }
  await server.shutdown() // a second call does nothing
  await assert.rejects(McpClient.connect({ alias: 'gone', url: server.url, connectTimeoutMs: 3000 }), (e) => e.code === 'mcp')
})

test('serveMcp without a gate denies gated tools and refuses non-loopback hosts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-core-mcp-'))
  await assert.rejects(serveMcp({ tools: [fsTools({ root: dir })], host: '0.0.0.0' }), (e) => e.code === 'mcp')
  const server = await serveMcp({ tools: [fsTools({ root: dir })] })
  const client = await McpClient.connect({ alias: 'nogate', url: server.url })
  try {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'nogate__fs_write', arguments: { path: 'sub.txt', content: 'x' } }] },
      { text: 'done' },
    ])
    const agent = new Agent({ provider, tools: [client.tools()], gate: () => true })
    const o = await (await agent.createSession()).send('go').outcome
    assert.equal(o.status, 'done')
    assert.equal(toolResults(provider)[0].isError, true)
    assert.equal(existsSync(join(dir, 'sub.txt')), false)
    agent.close()
  } finally {
    await client.close()
    await server.shutdown()
  }
})

test("serveMcp denies a call its gate answers 'ask' about: an MCP client cannot wait for the person", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-core-mcp-'))
  const server = await serveMcp({ tools: [fsTools({ root: dir })], gate: () => ({ decision: 'ask', prompt: 'Write?' }) })
  const client = await McpClient.connect({ alias: 'asks', url: server.url })
  try {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'asks__fs_write', arguments: { path: 'asked.txt', content: 'x' } }] },
      { text: 'done' },
    ])
    const agent = new Agent({ provider, tools: [client.tools()], gate: () => true })
    const o = await (await agent.createSession()).send('go').outcome
    assert.equal(o.status, 'done')
    const [write] = toolResults(provider)
    assert.equal(write.isError, true)
    assert.match(write.content[0].text, /cannot wait for an answer/)
    assert.equal(existsSync(join(dir, 'asked.txt')), false)
    agent.close()
  } finally {
    await client.close()
    await server.shutdown()
  }
})
