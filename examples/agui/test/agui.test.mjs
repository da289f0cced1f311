// The agui-server example against the official AG-UI client: @ag-ui/client's HttpAgent posts
// RunAgentInput and reads the SSE stream, verifying every event against the protocol itself.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { HttpAgent } from '@ag-ui/client'
import { startServer } from './server.mjs'

let server

before(async () => {
  server = await startServer()
})

after(async () => {
  await server?.stop()
})

/** An HttpAgent on a fresh thread, with a subscriber recording every event. */
function newAgent() {
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
  return { agent, events, finished }
}

function say(agent, text) {
  agent.addMessage({ id: randomUUID(), role: 'user', content: text })
}

test('a run with a tool call: tool call events, its result, and the answer', async () => {
  const { agent, events, finished } = newAgent()
  say(agent, 'list the files')
  await agent.runAgent()

  const types = events.map((e) => e.type)
  assert.equal(types[0], 'RUN_STARTED')
  assert.equal(types.at(-1), 'RUN_FINISHED')
  assert.deepEqual(
    types.filter((t) => t.startsWith('STEP_')),
    ['STEP_STARTED', 'STEP_FINISHED', 'STEP_STARTED', 'STEP_FINISHED'],
  )
  const start = events.find((e) => e.type === 'TOOL_CALL_START')
  assert.equal(start.toolCallName, 'fs_list')
  const args = events.filter((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === start.toolCallId)
  assert.deepEqual(JSON.parse(args.map((e) => e.delta).join('')), { path: '.' })
  const result = events.find((e) => e.type === 'TOOL_CALL_RESULT')
  assert.equal(result.toolCallId, start.toolCallId)
  assert.match(result.content, /hello\.txt/)
  assert.equal(finished.length, 1)
  assert.equal(finished[0].outcome, 'success')

  // The client's own message state, built from the events.
  const assistant = agent.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length)
  assert.equal(assistant.toolCalls[0].function.name, 'fs_list')
  const tool = agent.messages.find((m) => m.role === 'tool')
  assert.equal(tool.toolCallId, start.toolCallId)
  const last = agent.messages.at(-1)
  assert.equal(last.role, 'assistant')
  assert.match(last.content, /^fs_list returned \d+ lines\.$/)
})

test('the client context and state reach the model, as data after the message', async () => {
  const agent = new HttpAgent({ url: server.url, threadId: randomUUID(), initialState: { cart: { items: 2 } } })
  say(agent, 'hello')
  await agent.runAgent({ context: [{ description: 'The page the person is on', value: 'https://shop.example/cart' }] })
  // The offline model repeats what it was given: the message, then one untrusted-data block.
  const last = agent.messages.at(-1)
  assert.equal(last.role, 'assistant')
  assert.match(last.content, /you said "hello\\n\\n\[untrusted data from the client application/)
  assert.match(last.content, /Context: The page the person is on\\nhttps:\/\/shop\.example\/cart/)
  assert.match(last.content, /State:\\n\{\\n  \\"cart\\": \{\\n    \\"items\\": 2/)
})

test('a clarification is an interrupt, answered through resume', async () => {
  const { agent, events, finished } = newAgent()
  say(agent, 'ask me something')
  await agent.runAgent()

  assert.equal(finished.length, 1)
  assert.equal(finished[0].outcome, 'interrupt')
  assert.equal(agent.pendingInterrupts.length, 1)
  const [interrupt] = agent.pendingInterrupts
  assert.equal(interrupt.reason, 'clarification')
  assert.equal(interrupt.message, 'Which colour do you want?')
  assert.deepEqual(interrupt.responseSchema.properties.answer.enum, ['red', 'blue'])
  const ask = events.find((e) => e.type === 'TOOL_CALL_START')
  assert.equal(ask.toolCallName, 'ask_clarification')
  assert.equal(interrupt.toolCallId, ask.toolCallId)

  // The client itself refuses to go on without answering the interrupt.
  await assert.rejects(agent.runAgent(), /pending interrupt/)

  events.length = 0
  await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { answer: 'blue' } }] })
  assert.equal(finished.length, 2)
  assert.equal(finished[1].outcome, 'success')
  assert.deepEqual(agent.pendingInterrupts, [])
  const answer = events.find((e) => e.type === 'TOOL_CALL_RESULT')
  assert.equal(answer.toolCallId, ask.toolCallId)
  assert.equal(answer.content, 'blue')
  assert.equal(agent.messages.at(-1).content, 'You chose blue.')
})

test('a resume whose answer does not fit the question is refused and the interrupt stays', async () => {
  const { agent } = newAgent()
  say(agent, 'ask me')
  await agent.runAgent()
  const [interrupt] = agent.pendingInterrupts
  await assert.rejects(
    agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { answer: 'green' } }] }),
    /HTTP 400: invalid answer: "green" is not one of the options/,
  )
  await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: 'red' }] })
  assert.equal(agent.messages.at(-1).content, 'You chose red.')
})

test('aborting a run cancels it on the server: the thread takes the next run at once', async () => {
  const { agent, events } = newAgent()
  say(agent, 'be slow')
  let sawText
  const streaming = new Promise((resolve) => {
    sawText = resolve
  })
  agent.subscribe({
    onTextMessageContentEvent: () => {
      sawText()
    },
  })
  const run = agent.runAgent()
  await streaming
  agent.abortRun()
  await run
  assert.ok(events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'))
  assert.ok(!events.some((e) => e.type === 'RUN_FINISHED'))

  // The slow turn never ends by itself: the next turn of the thread only runs because the
  // server cancelled it when the client went away.
  const next = newAgent()
  next.agent.threadId = agent.threadId
  say(next.agent, 'think it over')
  await next.agent.runAgent()
  assert.equal(next.finished[0].outcome, 'success')
  assert.ok(next.events.some((e) => e.type === 'REASONING_MESSAGE_CONTENT'))
  assert.equal(next.agent.messages.at(-1).content, 'Thought about it: the answer is 42.')
})

test('malformed input gets a 400 with a clear message', async () => {
  const post = (body) => fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  let response = await post('{"threadId": 1}')
  assert.equal(response.status, 400)
  assert.match(await response.text(), /^invalid RunAgentInput: invalid type: integer `1`, expected a string/)
  response = await post(JSON.stringify({ threadId: 't', runId: 'r', messages: [] }))
  assert.equal(response.status, 400)
  assert.match(await response.text(), /messages is empty/)
  response = await post('x'.repeat(2 * 1024 * 1024))
  assert.equal(response.status, 413)
})
