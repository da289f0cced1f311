// One agent per browser tab against headless Debian Chromium (loopback pages only).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runTabAgents } from '../tabs.mjs'

test('two tab agents read their own pages at once in real Chromium; a closed tab says so', { timeout: 120_000 }, async () => {
  const r = await runTabAgents({ quiet: true })
  assert.match(r.links, /title: "Reading list"/)
  assert.match(r.form, /title: "Order form"/)
  assert.match(r.closed, /My page tools failed: .*this agent's browser tab t\d+ was closed/s)
  assert.match(r.closed, /Do not retry them/)
  assert.match(r.formAgain, /title: "Order form"/)
})
