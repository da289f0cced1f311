// The OpenAI Responses adapter from Node, against a loopback server replaying the project's
// constructed Responses fixtures (agent-providers/tests/fixtures/openai-responses).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, OpenAIResponses, tool } from '../lib/index.js'

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'agent-providers', 'tests', 'fixtures', 'openai-responses')

/** Serves POST /v1/responses with the named SSE fixtures, one per request. */
async function replay(...names) {
  const bodies = names.map((n) => fs.readFileSync(path.join(FIXTURES, n)))
  const seen = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      seen.push({ url: req.url, body: JSON.parse(body) })
      const payload = bodies[seen.length - 1]
      if (!payload) return res.writeHead(500).end()
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': payload.length }).end(payload)
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return { baseUrl: `http://127.0.0.1:${server.address().port}/v1`, seen, close: () => new Promise((r) => server.close(r)) }
}

test('OpenAIResponses runs a tool call and an answer over /v1/responses with store: false', async () => {
  const mock = await replay('stream-tool-call.sse', 'stream-text.sse')
  try {
    const getWeather = tool({
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: ({ city }) => `Rain in ${city}`,
    })
    const provider = new OpenAIResponses({ model: 'gpt-4.1', apiKey: 'sk-test', baseUrl: mock.baseUrl })
    assert.equal(provider.id, 'openai-responses')
    const agent = new Agent({ provider, tools: [getWeather], systemPrompt: 'You are terse.' })
    const outcome = await (await agent.createSession()).send('Weather in New York?').outcome
    assert.equal(outcome.status, 'done', outcome.error)
    assert.match(outcome.finalText, /^Olá! I can't check live weather/)
    assert.ok(outcome.usage.cachedInputTokens >= 1152, JSON.stringify(outcome.usage))
    const [first, second] = mock.seen
    assert.equal(first.url, '/v1/responses')
    assert.equal(first.body.store, false)
    assert.equal(first.body.instructions, 'You are terse.')
    assert.equal(first.body.tools[0].name, 'get_weather')
    const output = second.body.input.find((i) => i.type === 'function_call_output')
    assert.match(output.output, /Rain in New York City/)
    assert.ok(second.body.input.some((i) => i.type === 'function_call'))
    agent.close()
  } finally {
    await mock.close()
  }
})
