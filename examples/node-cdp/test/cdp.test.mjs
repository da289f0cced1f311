// Runs the example end to end against headless Debian Chromium (loopback pages only).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runTasks } from '../agent.mjs'

test('the links task and the form task run in real Chromium, refusals visible', { timeout: 180_000 }, async () => {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-cdp-test-'))
  const results = await runTasks({ outDir, quiet: true })

  // Links: the hidden list was expanded and every link saved with its URL.
  assert.equal(results.links.outcome.status, 'done')
  const saved = fs.readFileSync(path.join(outDir, 'links.txt'), 'utf8').trim().split('\n')
  const names = saved.map((l) => l.split('\t')[0])
  assert.deepEqual(names, ['Home', 'Learn Rust', 'The Tokio tutorial', 'napi-rs getting started', 'Puppeteer'])
  assert.ok(saved.includes('Learn Rust\thttps://www.rust-lang.org/learn'))
  assert.ok(results.links.events.some((e) => e.type === 'tool_call_succeeded' && e.name === 'page_click'))

  // Form: allowed fields filled and read back; the refusals came back to the model as errors.
  assert.equal(results.form.outcome.status, 'done')
  assert.deepEqual(results.formValues, {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    country: 'fr',
    password: '',
    promo: '',
    submitted: 'no',
  })
  const refusals = results.form.events.filter((e) => e.type === 'tool_call_failed').map((e) => e.error)
  assert.equal(refusals.length, 3)
  assert.match(refusals[0], /refused \(password\)/)
  assert.match(refusals[1], /refused \(disabled\)/)
  assert.match(refusals[2], /refused \(commit_action\)/)
})
