// enableTracing: the agent's turns arrive as OTLP/HTTP protobuf POSTs at a loopback collector,
// with the invoke_agent and chat spans named as the OpenTelemetry GenAI conventions say.
// Tracing is turned on once per process (each test file runs in a process of its own).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { Agent, AgentCoreError, ScriptedProvider, enableTracing } from '../lib/index.js'

/** A collector on 127.0.0.1 that keeps each request's path, content type and body. */
async function startCollector() {
  /** @type {{ path: string, contentType: string, body: Buffer }[]} */
  const received = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) })
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' })
      res.end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  return { server, received, endpoint: `http://127.0.0.1:${port}` }
}

test('enableTracing exports the turn spans to the endpoint, once per process', async () => {
  const { server, received, endpoint } = await startCollector()
  try {
    const tracing = enableTracing({ endpoint, serviceName: 'node-agent' })
    const agent = new Agent({ provider: new ScriptedProvider([{ text: 'hello' }]), config: { agentName: 'greeter' } })
    const outcome = await (await agent.createSession()).send('hi').outcome
    assert.equal(outcome.status, 'done')
    // The export runs off the JS thread, so this process's own server can answer it.
    await tracing.shutdown()
    await tracing.shutdown()

    assert.ok(received.length > 0, 'the collector received the spans')
    const [{ path, contentType, body }] = received
    assert.equal(path, '/v1/traces')
    assert.equal(contentType, 'application/x-protobuf')
    for (const expected of ['invoke_agent greeter', 'chat scripted', 'node-agent', 'gen_ai.conversation.id']) {
      assert.ok(body.includes(expected), expected)
    }

    assert.throws(() => enableTracing({ endpoint }), (e) => e instanceof AgentCoreError && /once per process/.test(e.message))
    assert.throws(() => enableTracing(/** @type {any} */ ({})), /endpoint/)
  } finally {
    server.close()
  }
})
