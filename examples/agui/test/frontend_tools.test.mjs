// A frontend tool (the client's own tool, in RunAgentInput.tools) with the official AG-UI
// client: the model calls it, the run finishes with the call streamed and no result, the client
// runs it and adds the tool message, and its next run continues the turn to the answer. The
// model is a scripted OpenAI-compatible server on loopback (test/model.mjs).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { HttpAgent } from '@ag-ui/client'
import { startServer } from './server.mjs'
import { startModel } from './model.mjs'

let model
let server

before(async () => {
  model = await startModel()
  server = await startServer({
    env: { LLM_PROVIDER: 'openai-compatible', LLM_MODEL: 'mock', LLM_API_KEY: '', LLM_BASE_URL: model.baseUrl },
  })
})

after(async () => {
  await server?.stop()
  await model?.stop()
})

const confirmDialog = {
  name: 'confirm_dialog',
  description: 'Asks the person to confirm in the page.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
}

test('a frontend tool: the model calls it, the client answers it, the run completes', async () => {
  const agent = new HttpAgent({ url: server.url, threadId: randomUUID() })
  const events = []
  const finished = []
  agent.subscribe({
    onEvent: ({ event }) => {
      events.push(event)
    },
    onRunFinishedEvent: (params) => {
      finished.push(params)
    },
  })
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'delete the draft' })
  await agent.runAgent({ tools: [confirmDialog] })

  // The model was offered the client's tool beside the agent's own.
  const offered = model.requests[0].tools.map((t) => t.function.name)
  assert.ok(offered.includes('confirm_dialog') && offered.includes('fs_list'), offered.join(', '))
  const start = events.find((e) => e.type === 'TOOL_CALL_START')
  assert.equal(start.toolCallName, 'confirm_dialog')
  const args = events.filter((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === start.toolCallId)
  assert.deepEqual(JSON.parse(args.map((e) => e.delta).join('')), { text: 'Delete the draft?' })
  assert.ok(events.some((e) => e.type === 'TOOL_CALL_END' && e.toolCallId === start.toolCallId))
  assert.ok(!events.some((e) => e.type === 'TOOL_CALL_RESULT'), 'the client runs it: no result from the server')
  assert.equal(events.at(-1).type, 'RUN_FINISHED')
  assert.equal(finished.length, 1)
  assert.equal(finished[0].outcome, 'success')
  assert.equal(events.at(-1).result.status, 'awaiting_tools')

  // The client runs its tool: the call is in its messages; the tool message answers it.
  const assistant = agent.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length)
  assert.equal(assistant.toolCalls[0].id, start.toolCallId)
  assert.equal(assistant.toolCalls[0].function.name, 'confirm_dialog')
  agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId: start.toolCallId, content: 'confirmed' })
  events.length = 0
  await agent.runAgent({ tools: [confirmDialog] })

  assert.equal(events[0].type, 'RUN_STARTED')
  assert.equal(events.at(-1).type, 'RUN_FINISHED')
  assert.equal(events.at(-1).result.status, 'done')
  assert.ok(!events.some((e) => e.type === 'TOOL_CALL_RESULT'), 'the client has the result already')
  const last = agent.messages.at(-1)
  assert.equal(last.role, 'assistant')
  assert.equal(last.content, 'the client said: confirmed')
  // The model read the client's result, once, after the user message it saw once.
  const seen = model.requests.at(-1).messages
  assert.equal(seen.filter((m) => m.role === 'user').length, 1)
  const results = seen.filter((m) => m.role === 'tool')
  assert.equal(results.length, 1)
  assert.equal(results[0].tool_call_id, start.toolCallId)
  assert.equal(results[0].content, 'confirmed')
})
