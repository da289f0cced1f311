// A local OpenAI-compatible server (loopback only) for tests and the whole-process benchmark.
// It calls the `noop` tool (or the first tool offered) until the conversation holds `rounds`
// tool results, then answers with text. Streams SSE when asked, like the real service.
import http from 'node:http'

export async function startMockOpenAI({ rounds = 1 } = {}) {
  const seen = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const request = JSON.parse(body)
      seen.push({ url: req.url, headers: req.headers, body: request })
      const results = request.messages.filter((m) => m.role === 'tool').length
      const tool = request.tools?.[0]?.function?.name
      const chunks = []
      const chunk = (delta, finish = null, extra = {}) =>
        chunks.push({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: request.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })
      if (tool && results < rounds) {
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: `call_${results}`, type: 'function', function: { name: tool, arguments: '' } }] })
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"n":' } }] })
        chunk({ tool_calls: [{ index: 0, function: { arguments: `${results}}` } }] })
        chunk({}, 'tool_calls', { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
      } else {
        chunk({ role: 'assistant', content: 'All ' })
        chunk({ content: 'done.' })
        chunk({}, 'stop', { usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } })
      }
      if (request.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`)
        res.end('data: [DONE]\n\n')
      } else {
        const calls = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? [])
        const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('')
        const message = { role: 'assistant', content: content || null }
        if (calls.length) {
          message.tool_calls = [{ id: calls[0].id, type: 'function', function: { name: calls[0].function.name, arguments: calls.map((c) => c.function.arguments).join('') } }]
        }
        const finish = calls.length ? 'tool_calls' : 'stop'
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', model: request.model, choices: [{ index: 0, message, finish_reason: finish }], usage: chunks.at(-1).usage }))
      }
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address()
  return { baseUrl: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise((r) => server.close(r)) }
}

// Run as a script: serve on a port and print the base URL (for the whole-process benchmark).
if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.argv[2] ?? 1)
  const mock = await startMockOpenAI({ rounds })
  mock.seen.push = () => 0 // keep memory flat during long runs
  console.log(mock.baseUrl)
}
