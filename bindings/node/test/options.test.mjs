// Every option of the Rust options types, from Node. `api/options.json` (generated from the Rust
// types, checked fresh by the Rust suite) lists each options type and its keys; this suite
// checks, for every type the Node binding takes:
//   1. the declaration (lib/*.d.ts, read with the TypeScript compiler's checker) names every key
//      in camelCase and nothing else, optional unless required, with a compatible type (number
//      for integer and number, `| null` exactly for nullable keys, the string union of an enum,
//      the nested interface of nested options, `Record<string, string>` for name/value maps);
//   2. the binding accepts every key (each set to its default, or a valid value where the
//      default is null), refuses an unknown key at every level naming it in camelCase, and a
//      duration in ms takes effect.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import {
  Agent,
  Anthropic,
  ConfigError,
  Gemini,
  McpClient,
  OpenAICompatible,
  ScriptedProvider,
  SqliteStore,
  PostgresStore,
  fsTools,
  pageTools,
  serveMcp,
  tool,
} from '../lib/index.js'
import { echo } from './helpers.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const LIB = path.join(here, '..', 'lib')
/** The options table, from the repository root. */
const TABLE = JSON.parse(readFileSync(path.join(here, '..', '..', '..', 'api', 'options.json'), 'utf8'))

/** The declared interface of each options type the Node binding takes. */
const TS_NAME = {
  AgentConfig: 'AgentConfig',
  CompactionConfig: 'CompactionConfig',
  CompressionConfig: 'CompressionConfig',
  ModelPrice: 'ModelPrice',
  ScriptStepSpec: 'ScriptStepSpec',
  ScriptedCallSpec: 'ScriptedCallSpec',
  ScriptedErrorSpec: 'ScriptedErrorSpec',
  Usage: 'ScriptedUsage',
  ProviderConfig: 'ProviderOptions',
  HttpConfig: 'HttpConfig',
  SqliteOptions: 'SqliteStoreOptions',
  PostgresOptions: 'PostgresStoreOptions',
  McpServerEntry: 'McpServerEntry',
  OutputCaps: 'OutputCaps',
  PageToolsConfig: 'PageToolsOptions',
  ScrapePolicy: 'ScrapePolicy',
  FsPolicy: 'FsToolsOptions',
  ShellEnv: 'ShellEnv',
}
/** Options types the Node binding does not take, and why. */
const NOT_IN_NODE = {
  CdpConfig: 'the Node binding has no CDP host: a JS BrowserHost (puppeteer, playwright, Electron) drives the browser',
}
/** Keys the binding sets itself. */
const IMPLIED = { ProviderConfig: ['kind'] }
/** Where each nested options type sits in a top-level one (for the unknown-key check). */
const NESTED = {
  CompactionConfig: ['AgentConfig', ['compaction']],
  CompressionConfig: ['AgentConfig', ['compression']],
  ScriptedCallSpec: ['ScriptStepSpec', ['toolCalls', 0]],
  ScriptedErrorSpec: ['ScriptStepSpec', ['error']],
  Usage: ['ScriptStepSpec', ['usage']],
  HttpConfig: ['ProviderConfig', ['http']],
  OutputCaps: ['McpServerEntry', ['caps']],
  ScrapePolicy: ['PageToolsConfig', ['scrape']],
  ShellEnv: ['FsPolicy', ['shellEnv']],
  ModelPrice: ['AgentConfig', ['prices', 'scripted']],
}
/** Keys whose values map the user's names (kept as written) to an options type. */
const MAP_OF = { 'AgentConfig.prices': 'ModelPrice' }
/**
 * Types whose Rust deserializer accepts unknown keys, with the reason: reported, not mended
 * here (the Rust types are not this binding's to change).
 */
const LENIENT = {
  Usage: 'agent_core::Usage (also what providers report) has no deny_unknown_fields',
}

const camel = (/** @type {string} */ key) => key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase())
const keysOf = (/** @type {string} */ type) => Object.keys(TABLE[type]).filter((k) => !(IMPLIED[type] ?? []).includes(k))

test('every options type of the table is taken by the Node binding or excluded with a reason', () => {
  for (const type of Object.keys(TABLE)) {
    assert.ok(TS_NAME[type] || NOT_IN_NODE[type], `${type}: new options type; declare it in lib/*.d.ts and map it here`)
  }
  for (const type of Object.keys(TS_NAME)) {
    assert.ok(TABLE[type], `${type} is not in api/options.json any more`)
    const top = Object.values(TABLE).some((keys) => Object.values(keys).some((k) => k.options === type))
    assert.ok(!top || NESTED[type], `${type} is nested: say where in NESTED`)
  }
})

// ---- 1. the declarations --------------------------------------------------------------------

const program = ts.createProgram([path.join(LIB, 'index.d.ts')], {
  noEmit: true,
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: ['node'],
  lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
})
const checker = program.getTypeChecker()
const declared = new Map(
  checker
    .getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(path.join(LIB, 'index.d.ts'))))
    .map((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s))
    .map((s) => [s.name, s]),
)

/** Why a declared property's type does not fit the table's entry, or null when it fits. */
function mismatch(/** @type {ts.Type} */ type, /** @type {any} */ spec, /** @type {string} */ at) {
  const parts = (type.isUnion() ? type.types : [type]).filter((t) => !(t.flags & ts.TypeFlags.Undefined))
  const nullable = spec.type.split('|').includes('null')
  const base = spec.type.split('|').filter((t) => t !== 'null')
  if (base.includes('any')) return null
  const hasNull = parts.some((t) => t.flags & ts.TypeFlags.Null)
  if (hasNull !== nullable) return nullable ? 'nullable in the table: add `| null`' : 'not nullable in the table: drop `| null`'
  const rest = parts.filter((t) => !(t.flags & ts.TypeFlags.Null))
  const all = (/** @type {(t: ts.Type) => boolean} */ f) => rest.length > 0 && rest.every(f)
  assert.equal(base.length, 1, `one base type: ${spec.type}`)
  switch (base[0]) {
    case 'integer':
    case 'number':
      return all((t) => Boolean(t.flags & ts.TypeFlags.NumberLike)) ? null : 'expected number'
    case 'boolean':
      return all((t) => Boolean(t.flags & ts.TypeFlags.BooleanLike)) ? null : 'expected boolean'
    case 'string': {
      if (!all((t) => Boolean(t.flags & ts.TypeFlags.StringLike))) return 'expected string'
      if (!spec.enum) return null
      const values = rest.map((t) => (t.isStringLiteral() ? t.value : null))
      return JSON.stringify([...values].sort()) === JSON.stringify([...spec.enum].sort())
        ? null
        : `expected the union ${spec.enum.map((v) => `'${v}'`).join(' | ')}`
    }
    case 'array':
      return all((t) => checker.isArrayType(t)) ? null : 'expected an array'
    case 'object':
      if (spec.options) {
        const want = TS_NAME[spec.options]
        return all((t) => t.symbol?.name === want) ? null : `expected the interface ${want}`
      }
      if (MAP_OF[at]) {
        const want = TS_NAME[MAP_OF[at]]
        return all((t) => checker.getIndexInfosOfType(t).some((i) => i.keyType.flags & ts.TypeFlags.String && i.type.symbol?.name === want))
          ? null
          : `expected Record<string, ${want}>`
      }
      return all((t) => checker.getIndexInfosOfType(t).some((i) => i.keyType.flags & ts.TypeFlags.String && i.type.flags & ts.TypeFlags.String))
        ? null
        : 'expected Record<string, string>'
    default:
      return `unknown table type ${spec.type}`
  }
}

test('each options interface names exactly the camelCase keys of its type, with compatible types', () => {
  for (const [type, tsName] of Object.entries(TS_NAME)) {
    const sym = declared.get(tsName)
    assert.ok(sym && sym.flags & ts.SymbolFlags.Interface, `${tsName} (for ${type}) is not an exported interface of lib/index.d.ts`)
    const props = new Map(checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)).map((p) => [p.name, p]))
    const want = keysOf(type).map(camel)
    const extra = [...props.keys()].filter((k) => !want.includes(k))
    assert.deepEqual(extra, [], `${tsName} declares keys ${type} does not have`)
    for (const key of keysOf(type)) {
      const spec = TABLE[type][key]
      const p = props.get(camel(key))
      assert.ok(p, `${tsName} lacks ${camel(key)} (${type}.${key})`)
      const optional = Boolean(p.flags & ts.SymbolFlags.Optional)
      assert.equal(optional, !spec.required, `${tsName}.${camel(key)}: ${spec.required ? 'required' : 'optional'} in the table`)
      const why = mismatch(checker.getTypeOfSymbol(p), spec, `${type}.${key}`)
      assert.equal(why, null, `${tsName}.${camel(key)}: ${why} (table: ${spec.type})`)
    }
  }
})

// ---- 2. the binding --------------------------------------------------------------------------

const dir = mkdtempSync(path.join(tmpdir(), 'agent-core-options-'))
let dbs = 0
const dbFile = () => path.join(dir, `options-${++dbs}.db`)
const host = {
  evaluate: async () => 'complete',
  navigate: async () => {},
  tabs: async () => [],
  openTab: async () => ({ id: 'T1', url: 'about:blank', title: '', active: true }),
  closeTab: async () => {},
  activateTab: async () => {},
}
let server
before(async () => {
  server = await serveMcp({ tools: [echo], bearerToken: true })
})
after(() => server.shutdown())

/** Values for the keys whose default is null (or that are required), by type. */
const samples = () => ({
  AgentConfig: {
    maxToolCalls: 50,
    maxOutputTokens: 256,
    temperature: 0.2,
    agentName: 'helper',
    maxRunCostUsd: 5,
    maxSessionCostUsd: 10,
    // The budgets need the scripted provider's model priced.
    prices: { scripted: { input: 1, cachedInput: 0.5, cacheWrite: 1.25, output: 2, reasoning: 3 } },
  },
  CompactionConfig: { maxInputTokens: 100_000 },
  ScriptedCallSpec: { name: 'echo', arguments: { text: 'hi' } },
  ScriptedErrorSpec: { kind: 'rate_limited', message: 'slow down', status: 429, retryAfterMs: 5 },
  Usage: { inputTokens: 3, outputTokens: 4 },
  ProviderConfig: { model: 'm', apiKey: 'sk-test', baseUrl: 'http://127.0.0.1:9/v1', maxInputTokens: 128_000, headers: { 'X-Test': '1' } },
  HttpConfig: { proxy: 'http://127.0.0.1:9' },
  // Past 2^32: napi hands it over as a double; the binding makes it an integer again.
  SqliteOptions: { maxSizeBytes: 1e10 },
  PostgresOptions: { schema: `node_options_${process.pid}` },
  McpServerEntry: {
    type: 'stdio',
    command: process.execPath,
    args: [process.env.AGENT_MCP_EVERYTHING ?? 'server-everything', 'stdio'],
    env: { AGENT_CORE_OPTIONS_TEST: '1' },
    cwd: dir,
    url: server.url,
    headers: { Authorization: `Bearer ${server.bearerToken}` },
    callTimeoutMs: 60_000,
    connectTimeoutMs: 30_000,
    requestTimeoutMs: 30_000,
    backoffInitialMs: 500,
    backoffMaxMs: 30_000,
  },
  PageToolsConfig: { uploadRoot: dir },
  FsPolicy: { root: dir },
})

/** An options object of `type` with every key: its sample, its nested options, or its default. */
function build(/** @type {string} */ type) {
  const out = /** @type {Record<string, any>} */ ({})
  const sample = samples()[type] ?? {}
  for (const key of keysOf(type)) {
    const spec = TABLE[type][key]
    const js = camel(key)
    if (js in sample) out[js] = sample[js]
    else if (spec.options) out[js] = build(spec.options)
    else {
      assert.ok(spec.default !== null && spec.default !== undefined, `${type}.${key}: no sample value for a key whose default is null`)
      out[js] = spec.default
    }
  }
  return out
}

const omit = (/** @type {Record<string, any>} */ o, /** @type {string[]} */ keys) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)))

test('AgentConfig, CompactionConfig, CompressionConfig: every key at its default is accepted', async () => {
  const agent = new Agent({ provider: new ScriptedProvider(['hi']), config: build('AgentConfig') })
  assert.equal(await (await agent.createSession()).send('go').result(), 'hi')
  agent.close()
})

test('ScriptStepSpec, ScriptedCallSpec, ScriptedErrorSpec, Usage: every key is accepted and does what it says', async () => {
  const steps = [
    { text: 'partial', reasoning: 'thinking', toolCalls: [build('ScriptedCallSpec')], usage: build('Usage'), error: build('ScriptedErrorSpec') },
    { delayMs: 1, then: 'late' },
    { hang: 'forever' },
  ]
  const used = new Set(steps.flatMap((s) => Object.keys(s)))
  assert.deepEqual([...used].sort(), keysOf('ScriptStepSpec').map(camel).sort())
  const agent = new Agent({ provider: new ScriptedProvider(steps), tools: [echo] })
  const s = await agent.createSession()
  const failed = await s.send('one').outcome
  assert.equal(failed.status, 'error')
  assert.equal(failed.errorKind, 'provider.rate_limited')
  assert.equal(await s.send('two').result(), 'late')
  agent.close()
})

test('ProviderConfig and HttpConfig: every key is accepted by each provider class', () => {
  const options = build('ProviderConfig')
  assert.deepEqual(Object.keys(options.http).sort(), keysOf('HttpConfig').map(camel).sort())
  for (const Class of [OpenAICompatible, Anthropic, Gemini]) {
    const p = new Class(options)
    assert.equal(p.model, 'm')
  }
})

test('SqliteOptions: every key is accepted', async () => {
  const store = await SqliteStore.open(dbFile(), build('SqliteOptions'))
  assert.deepEqual(await store.sessionIds(), [])
})

test('PostgresOptions: every key is accepted', { skip: !process.env.AGENT_CORE_TEST_POSTGRES_URL && 'needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test-node starts one)' }, async () => {
  const store = await PostgresStore.connect(String(process.env.AGENT_CORE_TEST_POSTGRES_URL), build('PostgresOptions'))
  assert.deepEqual(await store.sessionIds(), [])
})

test('McpServerEntry and OutputCaps: every key is accepted, over stdio and over HTTP', async () => {
  const all = build('McpServerEntry')
  const stdio = omit(all, ['url', 'headers'])
  const http = { ...omit(all, ['command', 'args', 'env', 'cwd', 'inheritEnv']), type: 'http' }
  assert.deepEqual([...new Set([...Object.keys(stdio), ...Object.keys(http)])].sort(), keysOf('McpServerEntry').map(camel).sort())
  assert.ok(process.env.AGENT_MCP_EVERYTHING, 'AGENT_MCP_EVERYTHING is not set: run scripts/lib/ensure-mcp-peers.sh')
  for (const [alias, entry] of [['stdio', stdio], ['http', http]]) {
    const client = await McpClient.connect({ alias, ...entry })
    try {
      assert.ok(client.toolNames.length > 0, alias)
    } finally {
      await client.close()
    }
  }
})

test('PageToolsConfig, ScrapePolicy, FsPolicy, ShellEnv: every key is accepted', () => {
  assert.ok(pageTools(host, build('PageToolsConfig')).names.includes('page_read'))
  assert.ok(fsTools(build('FsPolicy')).names.includes('fs_read'))
})

/** Builds the thing a top-level options type configures (what throws or rejects on bad options). */
const MAKE = {
  AgentConfig: (/** @type {any} */ o) => new Agent({ provider: new ScriptedProvider([]), config: o }),
  ScriptStepSpec: (/** @type {any} */ o) => new ScriptedProvider([o]),
  ProviderConfig: (/** @type {any} */ o) => new OpenAICompatible(o),
  SqliteOptions: (/** @type {any} */ o) => SqliteStore.open(dbFile(), o),
  // Options are read before connecting: no server is needed to refuse them.
  PostgresOptions: (/** @type {any} */ o) => PostgresStore.connect('postgres://agent@127.0.0.1:1/none', o),
  McpServerEntry: (/** @type {any} */ o) => McpClient.connect({ alias: 'refused', ...o }),
  PageToolsConfig: (/** @type {any} */ o) => pageTools(host, o),
  FsPolicy: (/** @type {any} */ o) => fsTools(o),
}
/** Valid options of each top-level type with every nested object present (and empty). */
const BASE = () => ({
  AgentConfig: { compaction: {}, compression: {}, prices: { scripted: { input: 1, output: 1 } } },
  ScriptStepSpec: { text: 'x', toolCalls: [{ name: 'echo' }], usage: { inputTokens: 1, outputTokens: 1 }, error: {} },
  ProviderConfig: { model: 'm', http: {} },
  SqliteOptions: {},
  PostgresOptions: {},
  McpServerEntry: { command: '/nonexistent/agent-core-mcp-server', caps: {} },
  PageToolsConfig: { scrape: {} },
  FsPolicy: { root: dir, shellEnv: {} },
})

test('an unknown key is refused at every level, named in camelCase', async (t) => {
  for (const type of Object.keys(TS_NAME)) {
    if (LENIENT[type]) {
      t.diagnostic(`${type}: unknown keys not checked: ${LENIENT[type]}`)
      continue
    }
    const [top, where] = NESTED[type] ?? [type, []]
    const options = /** @type {any} */ (BASE()[top])
    let target = options
    for (const step of where) target = target[step]
    target.bogusOptionName = 1
    let error
    try {
      await MAKE[top](options)
    } catch (e) {
      error = e
    }
    assert.ok(error instanceof ConfigError, `${type}: an unknown key was accepted (${error})`)
    assert.equal(error.code, 'invalid_argument', `${type}: ${error.message}`)
    assert.match(error.message, /unknown field `bogusOptionName`/, type)
    // The known keys it lists are camelCase too.
    const snake = keysOf(type).find((k) => k.includes('_'))
    if (snake) {
      assert.ok(error.message.includes(`\`${camel(snake)}\``), `${type}: ${error.message}`)
      assert.ok(!error.message.includes(`\`${snake}\``), `${type}: ${error.message}`)
    }
  }
})

test('a key of the wrong type is refused naming what was expected; null means the default', async () => {
  assert.throws(
    () => new Agent({ provider: new ScriptedProvider([]), config: { maxIterations: 'many' } }),
    (e) => e instanceof ConfigError && e.code === 'invalid_argument' && /invalid type: string "many"/.test(e.message),
  )
  assert.throws(() => new OpenAICompatible({ http: { maxAttempts: 1 } }), (e) => e.code === 'invalid_argument' && /missing field `model`/.test(e.message))
  // null (like undefined) keeps the default, at every level.
  const agent = new Agent({ provider: new ScriptedProvider(['ok']), config: { maxIterations: null, compaction: { ratio: null } } })
  assert.equal(await (await agent.createSession()).send('go').result(), 'ok')
  agent.close()
})

test('a duration in ms takes effect: toolTimeoutMs ends a slow JS tool', async () => {
  const slow = tool({
    name: 'slow',
    execute: (_args, { signal }) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve('too late'), 10_000)
      signal.addEventListener('abort', () => {
        clearTimeout(timer)
        resolve('aborted')
      })
    }),
  })
  const provider = new ScriptedProvider([{ toolCalls: [{ name: 'slow' }] }, 'after'])
  const agent = new Agent({ provider, tools: [slow], config: { toolTimeoutMs: 50 } })
  const started = performance.now()
  const run = (await agent.createSession()).send('go')
  const events = []
  for await (const ev of run.events()) events.push(ev)
  assert.ok(performance.now() - started < 5000, 'the tool timed out well before its 10 s')
  const failed = events.find((e) => e.type === 'tool_call_failed')
  assert.ok(failed, 'the slow call failed')
  assert.match(failed.error, /time/i)
  assert.equal((await run.outcome).finalText, 'after')
  agent.close()
})
