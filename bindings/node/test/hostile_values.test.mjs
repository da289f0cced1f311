// JS values that cannot become JSON: a tool result that contains itself, or is nested absurdly
// deep, is an error result for the model naming the problem (never a crash, never silently
// sent as raw text); the same values given as script steps or messages throw to the caller.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ScriptedProvider, tool } from '../lib/index.js'
import { collect, scripted, toolResults } from './helpers.mjs'

const call = (name, args = {}) => ({ toolCalls: [{ name, arguments: args }] })

/** An array `depth` levels deep, built without recursion. */
function nested(depth, leaf = 1) {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

/** Runs one call of a tool returning `make()`; the events and the tool-result message. */
async function runTool(make) {
  const t = tool({ name: 'hostile', execute: make })
  const { agent, provider } = scripted([call('hostile'), { text: 'recovered' }], { tools: [t] })
  const s = await agent.createSession()
  const run = s.send('go')
  const events = await collect(run)
  const outcome = await run.outcome
  return { events, outcome, result: toolResults(provider)[0] }
}

function assertErrorResult({ events, outcome, result }, pattern) {
  assert.equal(outcome.status, 'done')
  assert.equal(outcome.finalText, 'recovered')
  const failed = events.find((e) => e.type === 'tool_call_failed')
  assert.ok(failed, 'the call failed')
  assert.equal(failed.fatal, false)
  assert.equal(result.isError, true)
  assert.match(result.content[0].text, pattern)
}

test('a tool returning a cyclic object or array tells the model, sync or async', async () => {
  const cyclicObject = () => {
    const o = { name: 'loop' }
    o.self = o
    return o
  }
  assertErrorResult(await runTool(cyclicObject), /TypeError: cannot convert a cyclic structure to JSON: an object contains itself/)
  const cyclicArray = async () => {
    const a = [1]
    a.push({ back: a })
    return a
  }
  assertErrorResult(await runTool(cyclicArray), /cyclic structure/)
})

test('a tool returning a 100 000-deep value tells the model', async () => {
  assertErrorResult(await runTool(() => ({ deep: nested(100_000) })), /nested deeper than 100 levels/)
})

test('a result too deep for the core to read back is an error, not raw text', async () => {
  // 150 levels: JSON.stringify manages it, the core's parser (128 levels) would not.
  assertErrorResult(await runTool(async () => nested(150)), /nested deeper than 100 levels/)
})

test('normal nesting, shared values and toJSON still convert', async () => {
  const shared = { k: [1, 2.5, null, true, 's'] }
  const value = { a: shared, b: shared, list: [shared, shared], when: new Date(0), deep: nested(60, 'leaf') }
  const { outcome, result } = await runTool(() => value)
  assert.equal(outcome.status, 'done')
  assert.notEqual(result.isError, true)
  assert.deepEqual(JSON.parse(result.content[0].text), JSON.parse(JSON.stringify(value)))
})

test('cyclic script steps and messages throw a TypeError to the caller', async () => {
  const step = { text: 'hi' }
  step.again = step
  assert.throws(() => new ScriptedProvider([step]), TypeError)
  const { agent } = scripted([{ text: 'unused' }])
  const s = await agent.createSession()
  const part = { type: 'text', text: 'hi' }
  part.self = part
  assert.throws(() => s.send({ content: [part] }), TypeError)
})

test('a "__proto__" key in tool arguments is an own key for the tool, the gate and the events', async () => {
  const seen = {}
  const probe = tool({ name: 'probe', gated: true, execute: (args) => ((seen.tool = args), 'ok') })
  const raw = '{"__proto__": {"polluted": true}, "x": 1}'
  const { agent } = scripted([{ toolCalls: [{ name: 'probe', arguments: raw }] }, { text: 'done' }], {
    tools: [probe],
    gate: (request) => ((seen.gate = request.arguments), true),
  })
  const run = (await agent.createSession()).send('go')
  const events = await collect(run)
  assert.equal((await run.outcome).status, 'done')
  seen.event = events.find((e) => e.type === 'tool_call_started').arguments
  for (const [where, args] of Object.entries(seen)) {
    assert.equal(Object.getPrototypeOf(args), Object.prototype, where)
    assert.equal(args.polluted, undefined, where)
    assert.ok(Object.hasOwn(args, '__proto__'), where)
    assert.deepEqual(JSON.parse(JSON.stringify(args)), JSON.parse(raw), where)
  }
})

test('whole numbers in a tool result stay whole numbers for the model, past 32 bits too', async () => {
  const { result } = await runTool(() => ({ ms: 1_700_000_000_000, neg: -5e9, half: 0.5 }))
  assert.equal(result.content[0].text.replace(/\s/g, ''), '{"half":0.5,"ms":1700000000000,"neg":-5000000000}')
})

test('values reach JS intact whichever way they are built, and a JSON.parse replaced later is not used', async () => {
  // Small values are built property by property, larger ones through the engine's own parser:
  // both must give the same plain data. The replacement would corrupt anything it parsed.
  const original = JSON.parse
  const seen = []
  const probe = tool({ name: 'probe', execute: (args) => (seen.push(args), 'ok') })
  const deep = JSON.stringify(nested(90, { leaf: [1.5, 2 ** 53 + 2, 'é\u2028"\\'] }))
  const argsOf = ['{}', '{"a":1}', '{"a":[1,2]}', `{"deep":${deep},"big":18446744073709551615}`]
  const steps = [{ text: 'warm' }, { toolCalls: argsOf.map((a) => ({ name: 'probe', arguments: a })) }, { text: 'done' }]
  const { agent } = scripted(steps, { tools: [probe] })
  // The first conversions (this outcome among them) find the engine's JSON.parse.
  assert.equal((await (await agent.createSession()).send('warm up').outcome).finalText, 'warm')
  JSON.parse = () => ({ replaced: true })
  let outcome
  try {
    outcome = await (await agent.createSession()).send('go').outcome
  } finally {
    JSON.parse = original
  }
  assert.equal(outcome.status, 'done')
  assert.equal(outcome.finalText, 'done')
  assert.equal(seen.length, 4)
  assert.deepEqual(seen[0], {})
  assert.deepEqual(seen[1], { a: 1 })
  assert.deepEqual(seen[2], { a: [1, 2] })
  assert.deepEqual(seen[3].deep, JSON.parse(deep))
  assert.equal(seen[3].big, 18446744073709551615)
  let leaf = seen[3].deep
  for (let i = 0; i < 90; i++) leaf = leaf[0]
  assert.deepEqual(leaf, { leaf: [1.5, 2 ** 53 + 2, 'é\u2028"\\'] })
})
