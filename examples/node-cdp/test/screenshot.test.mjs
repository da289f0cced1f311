// page_screenshot and page_upload through agent-core's page tools over the puppeteer host, in
// headless Debian Chromium (loopback pages only): the PNG the model is sent is decoded here
// (IHDR, the IDAT rows inflated and unfiltered) to check its size bound and its pixels.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { Agent, ScriptedProvider, browserPrompt, pageTools } from 'agent-core'
import { PuppeteerHost, fitScale } from '../host.mjs'
import { serveFixtures } from '../serve.mjs'

/** Decodes an 8-bit RGB or RGBA PNG: `{ width, height, pixel(x, y) -> [r, g, b] }`. */
function decodePng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature')
  let at = 8
  let ihdr
  const idat = []
  while (at < buf.length) {
    const len = buf.readUInt32BE(at)
    const type = buf.toString('latin1', at + 4, at + 8)
    const data = buf.subarray(at + 8, at + 8 + len)
    if (type === 'IHDR') ihdr = data
    if (type === 'IDAT') idat.push(data)
    at += 12 + len
  }
  assert.ok(ihdr, 'an IHDR chunk')
  const width = ihdr.readUInt32BE(0)
  const height = ihdr.readUInt32BE(4)
  const [depth, colour, , , interlace] = ihdr.subarray(8, 13)
  assert.equal(depth, 8)
  assert.equal(interlace, 0)
  assert.ok(colour === 2 || colour === 6, `colour type ${colour}`)
  const bpp = colour === 6 ? 4 : 3
  const raw = zlib.inflateSync(Buffer.concat(idat))
  const stride = width * bpp
  const rows = []
  let prev = Buffer.alloc(stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)))
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp] : 0
      const b = prev[i]
      const c = i >= bpp ? prev[i - bpp] : 0
      let add = 0
      if (filter === 1) add = a
      else if (filter === 2) add = b
      else if (filter === 3) add = (a + b) >> 1
      else if (filter === 4) {
        const p = a + b - c
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)]
        add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
      }
      line[i] = (line[i] + add) & 0xff
    }
    rows.push(line)
    prev = line
  }
  return { width, height, pixel: (x, y) => [...rows[y].subarray(x * bpp, x * bpp + 3)] }
}

/** The last tool result of a request, and its image part's bytes. */
function lastShot(request) {
  const last = request.messages.at(-1)
  const text = last.content.filter((p) => p.type === 'text').map((p) => p.text).join('')
  const image = last.content.find((p) => p.type === 'image')
  return { text, isError: last.isError === true, png: image ? Buffer.from(image.source.data, 'base64') : null, mediaType: image?.mediaType }
}

let host
let server
let uploads
before(async () => {
  host = await PuppeteerHost.launch()
  server = await serveFixtures()
  uploads = fs.mkdtempSync(path.join(os.tmpdir(), 'node-cdp-uploads-'))
  fs.writeFileSync(path.join(uploads, 'notes.txt'), 'hello')
})
after(async () => {
  await host?.close()
  await server?.close()
  if (uploads) fs.rmSync(uploads, { recursive: true, force: true })
})

test('fitScale fits the bound, never enlarges', () => {
  assert.equal(fitScale(800, 600, 1280, 1280), 1)
  const s = fitScale(2560, 1600, 1280, 1280)
  assert.ok(Math.round(2560 * s) <= 1280 && Math.round(2560 * s) >= 1279)
  assert.ok(Math.round(20_000 * fitScale(1280, 20_000, 1280, 1280)) <= 1280)
})

test('page_screenshot in real Chromium: the viewport, the whole page and one element, as PNGs within the bound', { timeout: 120_000 }, async () => {
  const url = `${server.base}/shot.html`
  // One tool call per model call; each later call sees the results so far.
  const shots = []
  let boxRef = 'e0'
  const plan = [
    () => ({ name: 'page_navigate', arguments: { url } }),
    () => ({ name: 'page_screenshot', arguments: {} }),
    () => ({ name: 'page_screenshot', arguments: { full_page: true } }),
    () => ({ name: 'page_read', arguments: {} }),
    () => {
      boxRef = /^(e\d+) button "Green box"/m.exec(shots.at(-1).text)?.[1] ?? 'e0'
      return { name: 'page_screenshot', arguments: { ref: boxRef } }
    },
    () => ({ name: 'page_screenshot', arguments: { annotate: true } }),
    () => ({ name: 'page_read', arguments: { screenshot: true } }),
  ]
  let step = 0
  const provider = ScriptedProvider.fromFn((request) => {
    if (step > 1) shots.push(lastShot(request))
    return step < plan.length ? { toolCalls: [plan[step++]()] } : { text: 'seen' }
  })
  const agent = new Agent({
    provider,
    tools: [pageTools(host, { screenshotMaxWidth: 64, screenshotMaxHeight: 48 })],
    config: { vision: 'on' },
    gate: () => true,
    systemPrompt: browserPrompt({ vision: true }),
  })
  assert.equal(agent.takesImages, true)
  const outcome = await (await agent.createSession()).send('look at the page').outcome
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  agent.close()
  const [viewport, full, read, element, annotated, readShot] = shots
  assert.equal(shots.length, 6)
  for (const [name, shot] of [['viewport', viewport], ['full page', full], ['element', element]]) {
    assert.equal(shot.isError, false, `${name}: ${shot.text}`)
    assert.equal(shot.mediaType, 'image/png', name)
    const png = decodePng(shot.png)
    assert.ok(png.width >= 1 && png.width <= 64 && png.height >= 1 && png.height <= 48, `${name}: ${png.width} x ${png.height}`)
    assert.match(shot.text, new RegExp(`\\(${png.width} x ${png.height} px\\)`), name)
    shot.decoded = png
  }
  // 800 x 600 scaled into 64 x 48; the page is red at the top.
  assert.deepEqual([viewport.decoded.width, viewport.decoded.height], [64, 48])
  assert.deepEqual(viewport.decoded.pixel(32, 24), [255, 0, 0])
  // 800 x 2000 into 64 x 48: 48 tall, about 19 wide; red at the top, the green box at 75% of its height.
  assert.equal(full.decoded.height, 48)
  assert.ok(full.decoded.width < 64)
  assert.deepEqual(full.decoded.pixel(1, 1), [255, 0, 0])
  // The box spans 100-300 px across 800 and 1500-1600 px down 2000: around (4, 37) once scaled.
  const [r, g] = full.decoded.pixel(Math.round((200 / 800) * full.decoded.width), 37)
  assert.ok(g > 200 && r < 60, `green box in the full page: ${[r, g]}`)
  assert.match(read.text, /button "Green box"/)
  // The box alone (200 x 100 into 64 x 48: 64 x 32), scrolled into view first: green all over.
  assert.deepEqual([element.decoded.width, element.decoded.height], [64, 32])
  for (const [x, y] of [[1, 1], [62, 1], [1, 30], [62, 30]]) assert.deepEqual(element.decoded.pixel(x, y), [0, 255, 0], `${x},${y}`)
  // annotate draws the refs of the last page_read (the box is in view now) and takes them off.
  assert.equal(annotated.isError, false, annotated.text)
  assert.match(annotated.text, new RegExp(`boxes labelled with the refs [^;]*\\b${boxRef}\\b`))
  assert.ok(decodePng(annotated.png).width <= 64)
  assert.equal(await host.page().evaluate('document.getElementById("__agentToolsShotOverlay")'), null)
  // page_read with screenshot=true: the read, then the annotated viewport as an image.
  assert.match(readShot.text, /button "Green box"/)
  assert.match(readShot.text, /screenshot of the viewport/)
  assert.equal(readShot.mediaType, 'image/png')
  assert.ok(decodePng(readShot.png).height <= 48)
})

test('page_upload in real Chromium: setFiles puts the file from the upload folder into the input', { timeout: 120_000 }, async () => {
  const url = `${server.base}/shot.html`
  let phase = 0
  let uploadResult = ''
  const provider = ScriptedProvider.fromFn((request) => {
    const last = request.messages.at(-1)
    const text = last.role === 'tool' ? last.content.map((p) => p.text ?? '').join('') : ''
    switch (phase++) {
      case 0:
        return { toolCalls: [{ name: 'page_navigate', arguments: { url } }] }
      case 1:
        return { toolCalls: [{ name: 'page_read', arguments: {} }] }
      case 2: {
        const ref = /^(e\d+) \S+ "Attachment"/m.exec(text)?.[1] ?? 'e0'
        return { toolCalls: [{ name: 'page_upload', arguments: { ref, files: ['notes.txt'] } }] }
      }
      default:
        uploadResult = text
        return { text: 'attached' }
    }
  })
  const agent = new Agent({ provider, tools: [pageTools(host, { uploadRoot: uploads })], gate: () => true })
  const outcome = await (await agent.createSession()).send('attach my notes').outcome
  agent.close()
  assert.equal(outcome.status, 'done', JSON.stringify(outcome))
  assert.match(uploadResult, /attached "notes\.txt" to .*read back the same/)
  assert.equal(await host.page().evaluate('document.getElementById("files").files[0]?.name'), 'notes.txt')
})
