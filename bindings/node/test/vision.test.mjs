// Seeing the page from Node: the `vision` and `maxImages` options, `agent.takesImages`, and a JS
// BrowserHost's optional methods (screenshot, setFiles, hover, pressKey, dialog, answerDialog)
// reached through the page tools, or answered "not supported by this host" when absent.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { Agent, Anthropic, HostError, OpenAICompatible, ScriptedProvider, browserPrompt, pageTools } from '../lib/index.js'

/** A PNG of `width` x `height` pixels of one RGB colour (8-bit truecolour, filter 0 rows). */
export function solidPng(width, height, [r, g, b]) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(data.length, 0)
    head.write(type, 4, 'latin1')
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])), 0)
    return Buffer.concat([head, data, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const row = Buffer.alloc(1 + width * 3)
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3)
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** The page.js or shot.js operation of an `evaluate` expression (`(<script>)("op", {...})`). */
function scriptOp(expression) {
  const m = /\)\("(\w+)", (\{[^]*\})\)$/.exec(expression)
  return m ? { op: m[1], args: JSON.parse(m[2]) } : null
}

/**
 * A BrowserHost with one fake tab: every call is recorded, script operations answer from
 * `answers` (by operation name; `{ at: url }` otherwise), and `extra` adds optional methods.
 */
function fakeHost(extra = {}, answers = {}) {
  const url = 'https://shop.example/cart'
  const calls = []
  const host = {
    calls,
    evaluate(expression, tab) {
      const call = scriptOp(expression)
      calls.push({ op: 'evaluate', script: call?.op, tab })
      if (!call) return expression === 'location.href' ? url : 'complete'
      const answer = answers[call.op]
      return typeof answer === 'function' ? answer(call.args) : { at: url, ...(answer ?? {}) }
    },
    navigate: () => {},
    waitSettled: () => {},
    tabs: () => [{ id: 't1', url, title: 'Cart', active: true }],
    openTab: () => ({ id: 't2', url: 'about:blank', title: '', active: false }),
    closeTab: () => {},
    activateTab: () => {},
  }
  for (const [name, f] of Object.entries(extra)) {
    host[name] = (...args) => {
      calls.push({ op: name, args })
      return f(...args)
    }
  }
  return host
}

const call = (name, args = {}) => ({ toolCalls: [{ name, arguments: args }] })

/** Runs one turn in which the scripted model makes `calls`, then answers; the tool results. */
async function runCalls(host, calls, { config = { vision: 'on' }, pageOptions = {} } = {}) {
  const provider = new ScriptedProvider([...calls.map((c) => call(...c)), 'done'])
  const agent = new Agent({ provider, tools: [pageTools(host, pageOptions)], gate: () => true, config })
  const outcome = await (await agent.createSession()).send('look').outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  const requests = provider.requests()
  agent.close()
  return { requests, provider, results: requests.at(-1).messages.filter((m) => m.role === 'tool') }
}

const textOf = (message) => message.content.filter((p) => p.type === 'text').map((p) => p.text).join('')
const imagesOf = (message) => message.content.filter((p) => p.type === 'image')

test('vision and maxImages are options; takesImages says whether the model is sent images', () => {
  const tools = [pageTools(fakeHost({ screenshot: () => solidPng(1, 1, [0, 0, 0]) }))]
  const make = (config) => new Agent({ provider: new ScriptedProvider([]), tools, config })
  const on = make({ vision: 'on', maxImages: 1 })
  const off = make({ vision: 'off' })
  // auto: the scripted provider does not say its model takes images, so it is sent none.
  const auto = make({ vision: 'auto' })
  const dflt = make(undefined)
  assert.equal(on.takesImages, true)
  assert.equal(off.takesImages, false)
  assert.equal(auto.takesImages, false)
  assert.equal(dflt.takesImages, false)
  assert.ok(on.toolNames.includes('page_screenshot'))
  for (const a of [off, auto, dflt]) {
    assert.ok(!a.toolNames.includes('page_screenshot'))
    assert.ok(a.toolNames.includes('page_read'))
  }
  for (const a of [on, off, auto, dflt]) a.close()
  assert.throws(() => make({ vision: 'yes' }), (e) => e.code === 'invalid_argument' && /unknown variant `yes`/.test(e.message))
  assert.throws(() => make({ maxImages: -1 }), (e) => e.code === 'invalid_argument')
})

test("vision 'auto' follows what the provider knows of its model", () => {
  const tools = [pageTools(fakeHost())]
  const offline = { apiKey: 'sk-test', baseUrl: 'http://127.0.0.1:9/v1' }
  const cases = [
    [new OpenAICompatible({ model: 'gpt-4o', ...offline }), undefined, true],
    [new OpenAICompatible({ model: 'gpt-3.5-turbo', ...offline }), undefined, false],
    [new OpenAICompatible({ model: 'my-local-model', ...offline }), 'auto', false],
    [new Anthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-test' }), 'auto', true],
    [new OpenAICompatible({ model: 'gpt-4o', ...offline }), 'off', false],
    [new OpenAICompatible({ model: 'my-local-model', ...offline }), 'on', true],
  ]
  for (const [provider, vision, takes] of cases) {
    const agent = new Agent({ provider, tools, config: vision === undefined ? {} : { vision } })
    assert.equal(agent.takesImages, takes, `${provider.model} with vision ${vision}`)
    assert.equal(agent.toolNames.includes('page_screenshot'), takes, provider.model)
    agent.close()
  }
})

test('a model with vision off is not offered page_screenshot; with vision on it is', async () => {
  for (const [vision, offered] of [['off', false], ['on', true]]) {
    const { requests } = await runCalls(fakeHost(), [], { config: { vision } })
    const names = requests[0].tools.map((t) => t.name)
    assert.equal(names.includes('page_screenshot'), offered, vision)
    assert.ok(names.includes('page_read'), vision)
  }
})

test('a JS host without screenshot answers "not supported by this host"', async () => {
  const host = fakeHost()
  const { results } = await runCalls(host, [['page_screenshot'], ['page_read', { screenshot: true }]])
  assert.equal(results.length, 2)
  assert.equal(results[0].isError, true)
  assert.match(textOf(results[0]), /not supported by this host: it cannot capture the page as an image \(the host has no `screenshot` method\), so page_screenshot is unavailable here/)
  // page_read with screenshot=true fails the same way rather than dropping the image silently.
  assert.match(textOf(results[1]), /not supported by this host/)
  assert.ok(!host.calls.some((c) => c.op === 'screenshot'))
})

test('a JS host with screenshot gets the area and bounds; its bytes reach the tool result', async () => {
  const png = solidPng(8, 6, [255, 0, 0])
  const seen = []
  const host = fakeHost(
    {
      // A Buffer, a promise of a Uint8Array that is not a Buffer, an ArrayBuffer: all bytes.
      screenshot: (area, maxWidth, maxHeight, tab) => {
        seen.push({ area, maxWidth, maxHeight, tab })
        if (seen.length === 1) return png
        if (seen.length === 2) return Promise.resolve(new Uint8Array(png))
        return png.buffer.slice(png.byteOffset, png.byteOffset + png.byteLength)
      },
    },
    { shotrect: { x: 10, y: 20.5, width: 30, height: 40 } },
  )
  const { results } = await runCalls(
    host,
    [['page_screenshot'], ['page_screenshot', { full_page: true }], ['page_screenshot', { ref: 'e3' }]],
    { pageOptions: { screenshotMaxWidth: 64, screenshotMaxHeight: 48 } },
  )
  assert.deepEqual(seen, [
    { area: { kind: 'viewport' }, maxWidth: 64, maxHeight: 48, tab: undefined },
    { area: { kind: 'full_page' }, maxWidth: 64, maxHeight: 48, tab: undefined },
    { area: { kind: 'region', x: 10, y: 20.5, width: 30, height: 40 }, maxWidth: 64, maxHeight: 48, tab: undefined },
  ])
  assert.equal(results.length, 3)
  for (const [i, what] of ['the viewport', 'the whole page', 'element e3'].entries()) {
    const r = results[i]
    assert.notEqual(r.isError, true, textOf(r))
    assert.match(textOf(r), new RegExp(`screenshot of ${what} of https://shop\\.example/cart \\(8 x 6 px\\)`))
    const [image] = imagesOf(r)
    assert.ok(image, `result ${i} has an image part`)
    assert.equal(image.mediaType, 'image/png')
    assert.deepEqual(Buffer.from(image.source.data, 'base64'), png)
  }
})

test('a tab-bound host gets its tab; bad bytes and host errors come back to the model', async () => {
  const png = solidPng(2, 2, [0, 0, 255])
  const answers = [
    () => png,
    () => Buffer.from('not an image'),
    () => 'text is not bytes',
    () => solidPng(100, 10, [0, 0, 0]),
    () => {
      throw new HostError('the capture failed', 'script')
    },
  ]
  let n = 0
  const host = fakeHost({ screenshot: () => answers[n++]() })
  const { results } = await runCalls(host, answers.map(() => ['page_screenshot']), {
    // Four failures of one call in a row would trip the loop guard, which is not under test.
    config: { vision: 'on', maxRepeatedCalls: 0 },
    pageOptions: { tab: 't1', screenshotMaxWidth: 50 },
  })
  assert.equal(host.calls.filter((c) => c.op === 'screenshot').every((c) => c.args[3] === 't1'), true)
  assert.notEqual(results[0].isError, true)
  const errors = results.slice(1).map(textOf)
  assert.match(errors[0], /neither PNG nor JPEG/)
  assert.match(errors[1], /returned string, not the image's bytes/)
  assert.match(errors[2], /100 x 10 px image, outside the 50 x 1280 px bound/)
  assert.match(errors[3], /the capture failed/)
  assert.ok(results.slice(1).every((r) => r.isError === true))
})

test('a JPEG is sent as image/jpeg', async () => {
  // The smallest header the page tools read: SOI, then an SOF0 frame of 3 x 2 pixels.
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x02, 0x00, 0x03, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9])
  const { results } = await runCalls(fakeHost({ screenshot: () => jpeg }), [['page_screenshot']])
  const [image] = imagesOf(results[0])
  assert.ok(image, textOf(results[0]))
  assert.equal(image.mediaType, 'image/jpeg')
  assert.match(textOf(results[0]), /\(3 x 2 px\)/)
})

test('setFiles gets the file input expression and the checked paths; without it page_upload is not supported', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-core-upload-'))
  fs.writeFileSync(path.join(root, 'cv.pdf'), 'pdf')
  const answers = { uploadtarget: { n: 7, target: { ref: 'e7', role: 'button', name: 'Attach' } }, uploadafter: { files: [{ name: 'cv.pdf' }] } }
  const host = fakeHost({ setFiles: () => {} }, answers)
  const { results } = await runCalls(host, [['page_upload', { ref: 'e7', files: ['cv.pdf'] }]], { pageOptions: { uploadRoot: root } })
  const [set] = host.calls.filter((c) => c.op === 'setFiles')
  assert.ok(set, textOf(results[0]))
  const [element, paths, tab] = set.args
  assert.match(element, /byRef\.get\(7\)/)
  assert.deepEqual(paths, [fs.realpathSync(path.join(root, 'cv.pdf'))])
  assert.equal(tab, undefined)
  assert.match(textOf(results[0]), /attached "cv\.pdf"/)

  const without = await runCalls(fakeHost({}, answers), [['page_upload', { ref: 'e7', files: ['cv.pdf'] }]], { pageOptions: { uploadRoot: root } })
  assert.match(textOf(without.results[0]), /not supported by this host: .*`setFiles`.*page_upload/)
  // No uploadRoot: refused before the host is asked.
  const none = await runCalls(fakeHost({ setFiles: () => {} }, answers), [['page_upload', { ref: 'e7', files: ['cv.pdf'] }]])
  assert.match(textOf(none.results[0]), /no_upload_folder/)
  fs.rmSync(root, { recursive: true, force: true })
})

test('dialog and answerDialog are forwarded; hover and pressKey reach the host or are not supported', async () => {
  let open = { kind: 'prompt', message: 'Your name?', defaultText: 'Ada' }
  const host = fakeHost(
    {
      dialog: () => open,
      answerDialog: () => {
        open = null
      },
      hover: () => {},
      pressKey: () => {},
    },
    { hoverpoint: { x: 12.5, y: 7, target: { ref: 'e2' } }, keytarget: { target: { ref: 'e2' } } },
  )
  const { results } = await runCalls(host, [
    ['page_dialog', { accept: true, text: 'Grace' }],
    ['page_hover', { ref: 'e2' }],
    ['page_press_key', { key: 'ArrowDown' }],
  ])
  const answered = host.calls.find((c) => c.op === 'answerDialog')
  assert.deepEqual(answered?.args, [true, 'Grace', undefined], textOf(results[0]))
  assert.match(textOf(results[0]), /accepted \(OK\) the prompt dialog with "Grace"/)
  assert.deepEqual(host.calls.find((c) => c.op === 'hover')?.args, [12.5, 7, undefined], textOf(results[1]))
  const pressed = host.calls.find((c) => c.op === 'pressKey')
  assert.ok(pressed, textOf(results[2]))
  assert.equal(pressed.args[0], 'ArrowDown')
  assert.deepEqual(pressed.args[1], [])

  const bare = fakeHost({}, { hoverpoint: { x: 1, y: 1 } })
  const r = await runCalls(bare, [['page_dialog', { accept: false }], ['page_hover', { ref: 'e2' }], ['page_press_key', { key: 'Enter' }]])
  // No dialog() method: no dialog is ever open.
  assert.match(textOf(r.results[0]), /no dialog is open/)
  assert.match(textOf(r.results[1]), /not supported by this host: .*`hover`.*page_hover/)
  assert.match(textOf(r.results[2]), /not supported by this host: .*`pressKey`.*page_press_key/)
})

test('browserPrompt({ vision: true }) tells the model about page_screenshot', () => {
  const plain = browserPrompt()
  const seeing = browserPrompt({ vision: true })
  assert.doesNotMatch(plain, /page_screenshot/)
  assert.match(seeing, /page_screenshot shows the page as an image/)
  assert.equal(browserPrompt({ vision: false }), plain)
  assert.ok(seeing.length > plain.length)
  assert.throws(() => browserPrompt({ vision: 'yes' }), (e) => e.code === 'invalid_argument' && /vision.*boolean/.test(e.message))
})

test('maxImages: only the newest images reach the model, older ones become a note', async () => {
  const host = fakeHost({ screenshot: () => solidPng(4, 4, [9, 9, 9]) })
  const { results } = await runCalls(host, [['page_screenshot'], ['page_screenshot'], ['page_screenshot']], {
    config: { vision: 'on', maxImages: 1 },
  })
  assert.deepEqual(results.map((r) => imagesOf(r).length), [0, 0, 1])
  assert.match(textOf(results[0]), /\[image omitted: only the newest 1 images are sent\]/)
})
