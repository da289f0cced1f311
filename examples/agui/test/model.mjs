// A scripted OpenAI-compatible model server on loopback (not an LLM), for runs that need a
// model the agui-server's offline one is not: it calls the client's `confirm_dialog` tool when
// the request offers it, and reports a tool's result once one comes back.
import { createServer } from 'node:http'

function reply(last, tools) {
  if (last?.role === 'tool') return { text: `the client said: ${last.content}` }
  if (tools.some((t) => t.function?.name === 'confirm_dialog')) {
    return { call: { id: 'call_confirm_1', name: 'confirm_dialog', arguments: JSON.stringify({ text: 'Delete the draft?' }) } }
  }
  return { text: 'no client tool offered' }
}

function chunk(delta, finish = null) {
  return { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 0, model: 'mock', choices: [{ index: 0, delta, finish_reason: finish }] }
}

export async function startModel() {
  const requests = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const request = JSON.parse(body || '{}')
      requests.push(request)
      const answer = reply(request.messages?.at(-1), request.tools ?? [])
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
      if (!request.stream) {
        const message = answer.call
          ? { role: 'assistant', content: null, tool_calls: [{ id: answer.call.id, type: 'function', function: { name: answer.call.name, arguments: answer.call.arguments } }] }
          : { role: 'assistant', content: answer.text }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion', created: 0, model: 'mock', choices: [{ index: 0, message, finish_reason: answer.call ? 'tool_calls' : 'stop' }], usage }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const send = (data) => res.write(`data: ${JSON.stringify(data)}\n\n`)
      if (answer.call) {
        send(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: answer.call.id, type: 'function', function: { name: answer.call.name, arguments: '' } }] }))
        send(chunk({ tool_calls: [{ index: 0, function: { arguments: answer.call.arguments } }] }))
        send(chunk({}, 'tool_calls'))
      } else {
        send(chunk({ role: 'assistant', content: answer.text }))
        send(chunk({}, 'stop'))
      }
      send({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 0, model: 'mock', choices: [], usage })
      res.end('data: [DONE]\n\n')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    stop: () => new Promise((resolve) => server.close(resolve)),
  }
}
