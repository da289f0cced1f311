'use strict'
/**
 * agent-core for Node.js: agents, sessions and runs of the Rust agent-core runtime, with tools,
 * the consent gate and event observers written in JavaScript.
 *
 * ```js
 * const { Agent, ScriptedProvider, tool } = require('agent-core')
 * ```
 * @module agent-core
 */
const native = require('../index.js')
const errors = require('./errors.js')
const { tool, invoker } = require('./tool.js')

const {
  wrap,
  AgentCoreError,
  ConfigError,
  ToolDefinitionError,
  SessionNotFoundError,
  SessionExistsError,
  StoreError,
  ClosedError,
  ClarificationError,
  RunError,
  ToolError,
  FatalToolError,
  HostError,
  TabQueueFullError,
} = errors

/** Fatal tool errors kept for their outcome, at most this many per agent. */
const MAX_KEPT_ERRORS = 1024

/**
 * A provider that replays a fixed script, one step per model call. **Not a language model**:
 * for tests, benchmarks and offline demos.
 */
class ScriptedProvider {
  /**
   * @param {any[]} steps
   * @param {{ recordRequests?: boolean }} [options] keep every request for `requests()` (default true)
   */
  constructor(steps, options = {}) {
    if (!Array.isArray(steps)) throw new ConfigError('ScriptedProvider(steps): steps must be an array', 'invalid_argument')
    /** @internal */
    this.native = wrap(() => native.NativeProvider.scripted(JSON.stringify(steps), options.recordRequests !== false))
  }
  /**
   * A scripted provider whose steps come from `choose(request)`, a synchronous function called
   * once per model call with the request (system, messages, tools). It is still not a model:
   * it lets a script plan each step from what the tools returned.
   * @param {(request: any) => any} choose
   */
  static fromFn(choose) {
    if (typeof choose !== 'function') {
      throw new ConfigError('ScriptedProvider.fromFn(choose): choose must be a function', 'invalid_argument')
    }
    const p = Object.create(ScriptedProvider.prototype)
    p.native = wrap(() =>
      native.NativeProvider.scriptedFn((/** @type {string} */ json) => {
        try {
          return JSON.stringify(choose(JSON.parse(json)))
        } catch (e) {
          return JSON.stringify({
            error: { kind: 'bad_request', message: `the script function threw: ${e instanceof Error ? e.message : String(e)}` },
          })
        }
      }),
    )
    return p
  }

  /** The provider's id (`scripted`). */
  get id() {
    return this.native.id
  }
  /** Model calls made so far. */
  get callCount() {
    return this.native.callCount
  }
  /** The requests received so far (system prompt, messages, tools), oldest first. */
  requests() {
    return JSON.parse(this.native.requestsJson())
  }
}

/** Options shared by the real provider adapters. */
function connect(kind, options) {
  if (!options || typeof options.model !== 'string') {
    throw new ConfigError(`${kind}: options.model is required`, 'config')
  }
  return wrap(() => native.NativeProvider.connect({ ...options, kind }))
}

/** What every provider class is: a native provider and its id and model. */
class NativeProvider {
  /** @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
  }
  get id() {
    return this.native.id
  }
  get model() {
    return this.native.model
  }
}

/** A provider speaking OpenAI Chat Completions (OpenAI, OpenRouter, vLLM, llama.cpp, ...). */
class OpenAICompatible extends NativeProvider {
  /** @param {any} options `{ model, apiKey?, baseUrl?, streaming?, headers?, maxAttempts?, callTimeoutMs?, maxInputTokens? }` */
  constructor(options) {
    super(connect('openai-compatible', options))
  }
}

/** A provider speaking Anthropic Messages. */
class Anthropic extends NativeProvider {
  /** @param {any} options */
  constructor(options) {
    super(connect('anthropic', options))
  }
}

/** A provider speaking Google Gemini generateContent. */
class Gemini extends NativeProvider {
  /** @param {any} options */
  constructor(options) {
    super(connect('gemini', options))
  }
}

/**
 * Routes each model call to the first provider, falling back to the next ones in order when a
 * call fails with a retryable error (rate limit, timeout, transport, 5xx) before any content.
 */
class FallbackRouter extends NativeProvider {
  /** @param {any} primary @param {...any} fallbacks */
  constructor(primary, ...fallbacks) {
    for (const p of [primary, ...fallbacks]) {
      if (!p || !p.native) throw new ConfigError('FallbackRouter: every route must be a provider', 'invalid_argument')
    }
    let n = primary.native
    for (const f of fallbacks) n = n.withFallback(f.native)
    super(n)
  }
}

/** The provider `LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY` and `LLM_BASE_URL` describe. */
function providerFromEnv() {
  const n = wrap(() => native.NativeProvider.fromEnv())
  return Object.freeze({ native: n, id: n.id, model: n.model })
}

/** A store keeping sessions in a SQLite file (WAL; survives restarts; crash repair on open). */
class SqliteStore {
  /** @internal @param {any} n @param {string} path */
  constructor(n, path) {
    /** @internal */
    this.native = n
    /** The database file. */
    this.path = path
  }
  /**
   * Opens (or creates) the database at `path`. The loop's writes are queued and committed in
   * groups (a turn's outcome is returned once it is durable); `options` tune that.
   * @param {string} path
   * @param {{ durability?: 'normal' | 'full', writeBehind?: boolean, groupCommitDelayMs?: number, maxSizeBytes?: number }} [options]
   */
  static async open(path, options) {
    return new SqliteStore(await wrap(() => native.openSqliteStore(String(path), options ?? undefined)), String(path))
  }
  /** The ids of the stored sessions. */
  sessionIds() {
    return wrap(() => this.native.sessionIds())
  }
}

/**
 * API keys, one per provider, kept encrypted in a SqliteStore's database through a `Crypt`
 * written in JS (for example Electron's `safeStorage`). Keys are never stored in plaintext.
 */
class KeyStore {
  /** @internal @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
  }
  /**
   * @param {SqliteStore} store
   * @param {{ isEncryptionAvailable(): boolean, encryptString(text: string): Uint8Array, decryptString(data: Uint8Array): string }} crypt
   *   synchronous methods; throw an error with `code: 'unavailable'` when encryption cannot be used
   * @param {{ providers?: string[] }} [options] the accepted providers (default: the built-in list)
   */
  static create(store, crypt, options = {}) {
    if (!(store instanceof SqliteStore)) throw new ConfigError('KeyStore.create: store must be a SqliteStore', 'invalid_argument')
    for (const m of ['isEncryptionAvailable', 'encryptString', 'decryptString']) {
      if (!crypt || typeof crypt[m] !== 'function') throw new ConfigError(`KeyStore.create: crypt has no ${m}()`, 'invalid_argument')
    }
    const call = (/** @type {any} */ r) => {
      try {
        let ok
        if (r.op === 'available') ok = Boolean(crypt.isEncryptionAvailable())
        else if (r.op === 'encrypt') ok = Buffer.from(crypt.encryptString(r.data)).toString('base64')
        else ok = String(crypt.decryptString(Buffer.from(r.data, 'base64')))
        return JSON.stringify({ ok })
      } catch (e) {
        const err = /** @type {any} */ (e)
        return JSON.stringify({ error: err instanceof Error ? err.message : String(err), unavailable: err?.code === 'unavailable' })
      }
    }
    return new KeyStore(wrap(() => native.NativeKeyStore.create(store.native, call, options.providers)))
  }
  /** The accepted providers. */
  get providers() {
    return this.native.providers()
  }
  /** Encrypts and stores a provider's key (surrounding whitespace removed). @param {string} provider @param {string} key */
  setKey(provider, key) {
    return wrap(() => this.native.setKey(provider, key))
  }
  /** A provider's key, or null when none is stored or it does not decrypt here. @param {string} provider */
  getKey(provider) {
    return wrap(() => this.native.getKey(provider))
  }
  /** `[{ provider, usable, stored }]`, never the keys. */
  status() {
    return wrap(() => this.native.status())
  }
  /** Removes a provider's key. @param {string} provider */
  clearKey(provider) {
    return wrap(() => this.native.clearKey(provider))
  }
}

/** A group of built-in tools (added to an agent with `tools: [...]`). */
class ToolSet {
  /** @internal @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
    this.kind = 'agent-core.toolset'
  }
  /** The tools' specs. */
  get specs() {
    return JSON.parse(this.native.specsJson())
  }
  /** The tools' names. */
  get names() {
    return this.specs.map((/** @type {any} */ s) => s.name)
  }
  /**
   * The same tools with `gated` set for the named ones.
   * @param {string[]} names
   * @param {boolean} gated
   */
  withGated(names, gated) {
    return new ToolSet(this.native.regated(names, gated))
  }
}

/**
 * fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec. Writes, deletes and the shell
 * are gated. Pass `root` to confine every path to a directory, or `unrestricted: true`.
 * `maxWriteBytes` caps one fs_write (default 10 MiB); `shellEnv: { inheritAll, passthrough, set }`
 * says what shell_exec's commands inherit (by default only a safe list of variables).
 * @param {{ root?: string, unrestricted?: boolean, maxReadBytes?: number, maxListEntries?: number, maxShellOutput?: number, maxWriteBytes?: number, shellEnv?: { inheritAll?: boolean, passthrough?: string[], set?: Record<string, string> } }} options
 */
function fsTools(options) {
  return new ToolSet(wrap(() => native.fsTools(options ?? {})))
}

const HOST_CODES = new Set(['disconnected', 'timeout', 'script', 'navigation', 'no_such_tab'])

/**
 * The page and tab tools over a BrowserHost written in JS (puppeteer, playwright, Electron...).
 * @param {any} host an object with evaluate, navigate, tabs, openTab, closeTab, activateTab
 *   (and optionally waitSettled, resolveAddress)
 * page_scrape is gated and fetches public https addresses only unless `scrapeAllowLoopback`,
 * `scrapeLoopbackHttp` (loopback over http too) or `scrapeAllowPrivate` allow more;
 * `scrapeExtraRootsPem` adds trusted root certificates.
 * @param {{ searchTemplate?: string, settleTimeoutMs?: number, maxChars?: number, maxElements?: number, scrapeLoopbackHttp?: boolean, scrapeAllowLoopback?: boolean, scrapeAllowPrivate?: boolean, scrapeExtraRootsPem?: string[] }} [options]
 */
function pageTools(host, options = {}) {
  for (const m of ['evaluate', 'navigate', 'tabs', 'openTab', 'closeTab', 'activateTab']) {
    if (!host || typeof host[m] !== 'function') {
      throw new ConfigError(`pageTools(host): the host has no ${m}() method`, 'invalid_argument')
    }
  }
  const ok = (/** @type {unknown} */ value) => JSON.stringify({ ok: value === undefined ? null : value })
  const fail = (/** @type {any} */ e) =>
    JSON.stringify({
      error: {
        code: e && HOST_CODES.has(e.code) ? e.code : 'other',
        message: e instanceof Error ? e.message : String(e),
      },
    })
  const dispatch = (/** @type {any} */ r) => {
    const tab = r.tab ?? undefined
    switch (r.op) {
      case 'evaluate':
        return host.evaluate(r.arg, tab)
      case 'navigate':
        return host.navigate(r.arg, tab)
      case 'waitSettled':
        return host.waitSettled(r.timeoutMs, tab)
      case 'tabs':
        return host.tabs()
      case 'openTab':
        return host.openTab(r.arg ?? undefined)
      case 'closeTab':
        return host.closeTab(r.tab)
      case 'activateTab':
        return host.activateTab(r.tab)
      case 'resolveAddress':
        return typeof host.resolveAddress === 'function' ? host.resolveAddress(r.arg) : null
      default:
        throw new HostError(`unknown host operation ${r.op}`)
    }
  }
  const call = (/** @type {any} */ request) => {
    try {
      return Promise.resolve(dispatch(request)).then(ok, fail)
    } catch (e) {
      return fail(e)
    }
  }
  const {
    searchTemplate,
    settleTimeoutMs,
    maxChars,
    maxElements,
    scrapeLoopbackHttp,
    scrapeAllowLoopback,
    scrapeAllowPrivate,
    scrapeExtraRootsPem,
  } = options
  return new ToolSet(
    wrap(() =>
      native.pageTools(call, {
        searchTemplate,
        settleTimeoutMs,
        maxChars,
        maxElements,
        scrapeLoopbackHttp,
        scrapeAllowLoopback,
        scrapeAllowPrivate,
        scrapeExtraRootsPem: scrapeExtraRootsPem === undefined ? undefined : Array.from(scrapeExtraRootsPem, String),
        hostWaits: typeof host.waitSettled === 'function',
      }),
    ),
  )
}

/**
 * A connection to an MCP server: a child process over stdio (`command`, `args`, `env`, `cwd`)
 * or streamable HTTP (`url`, `headers`). Its tools are named `alias__tool` and are gated unless
 * the server marks them read-only and `trustReadOnlyHints` is set.
 */
class McpClient {
  /** @internal @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
  }
  /**
   * Starts (or connects to) the server, completes the handshake and lists its tools.
   * @param {any} options
   */
  static async connect(options) {
    if (!options || typeof options !== 'object' || typeof options.alias !== 'string') {
      throw new ConfigError('McpClient.connect(options): `alias` (a string) is required', 'invalid_argument')
    }
    const {
      alias,
      command,
      args,
      env,
      inheritEnv,
      cwd,
      url,
      headers,
      callTimeoutMs,
      connectTimeoutMs,
      requestTimeoutMs,
      trustReadOnlyHints,
    } = options
    const strings = (/** @type {any} */ o, /** @type {string} */ what) => {
      if (o === undefined) return undefined
      if (o === null || typeof o !== 'object') throw new ConfigError(`McpClient.connect: \`${what}\` must be an object of strings`, 'invalid_argument')
      return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]))
    }
    const n = await wrap(() =>
      native.mcpConnect({
        alias,
        command,
        args: args === undefined ? undefined : Array.from(args, String),
        env: strings(env, 'env'),
        inheritEnv,
        cwd,
        url,
        headers: strings(headers, 'headers'),
        callTimeoutMs,
        connectTimeoutMs,
        requestTimeoutMs,
        trustReadOnlyHints,
      }),
    )
    return new McpClient(n)
  }
  /** The server's alias (the prefix of its tool names). */
  get alias() {
    return this.native.alias
  }
  /** The server's current tools, as a `ToolSet` for an agent's `tools`. */
  tools() {
    return new ToolSet(this.native.tools())
  }
  /** The current tools' (prefixed) names. */
  get toolNames() {
    return this.native.toolNames()
  }
  /** Lists the server's tools again (read `tools()` afterwards). */
  refreshTools() {
    return wrap(() => this.native.refreshTools())
  }
  /** What the server said about itself: name, version, protocolVersion, instructions. */
  serverInfo() {
    return this.native.serverInfo()
  }
  /** Whether the connection is up. */
  isConnected() {
    return this.native.isConnected()
  }
  /** Closes the connection (and stops a stdio server); its tools then fail for the model. */
  close() {
    return this.native.close()
  }
}

/** A running MCP endpoint (streamable HTTP on loopback). */
class McpServer {
  /** @internal @param {any} n @param {Map<number, AbortController>} controllers */
  constructor(n, controllers) {
    /** @internal */
    this.native = n
    /** @internal */
    this._controllers = controllers
    /** The endpoint URL, such as `http://127.0.0.1:41234/mcp`. */
    this.url = n.url
    /** The token clients must send as `Authorization: Bearer <token>`, or null. */
    this.bearerToken = n.bearerToken ?? null
  }
  /** Stops the server and ends every session (a second call does nothing). */
  async shutdown() {
    await wrap(() => this.native.shutdown())
    for (const c of this._controllers.values()) c.abort(new ClosedError('the MCP server was shut down', 'closed'))
    this._controllers.clear()
  }
}

/**
 * Serves tools (built-in `ToolSet`s such as `fsTools` or an `McpClient`'s, and JS `tool({...})`s)
 * to MCP clients over streamable HTTP on loopback. Every call is validated and, for gated tools,
 * asks `gate` (the same gate an `Agent` takes); without a gate, gated tools are denied.
 * `bearerToken` (a string, or `true` for a fresh one) is required on every request (401
 * otherwise; read it back as `server.bearerToken`); `allowedOrigins` are the browser origins
 * besides the server's own that may call it (others get 403).
 * @param {{ tools: any[], gate?: any, name?: string, instructions?: string, host?: string, port?: number, bearerToken?: string | true, allowedOrigins?: string[] }} options
 */
async function serveMcp(options) {
  if (!options || typeof options !== 'object') {
    throw new ConfigError('serveMcp(options): options must be an object', 'invalid_argument')
  }
  const { tools = [], gate, name, instructions, host, port, allowedOrigins } = options
  let { bearerToken } = options
  if (bearerToken === true) bearerToken = newBearerToken()
  else if (bearerToken === false || bearerToken === null) bearerToken = undefined
  else if (bearerToken !== undefined && typeof bearerToken !== 'string') {
    throw new ConfigError('serveMcp: `bearerToken` must be a string or true (generate one)', 'invalid_argument')
  }
  const b = new native.NativeAgentBuilder()
  /** @type {Map<number, AbortController>} */
  const controllers = new Map()
  /** @type {Map<number, unknown>} */
  const errors = new Map()
  let next = 1
  addToolsAndGate(b, tools, gate, controllers, errors, () => {
    errors.clear() // fatal errors of served tools become MCP protocol errors; nothing reads them here
    return next++
  })
  wrap(() => b.seal())
  const n = await wrap(() =>
    b.serveMcp({
      name,
      instructions,
      host,
      port,
      bearerToken,
      allowedOrigins: allowedOrigins === undefined ? undefined : Array.from(allowedOrigins, String),
    }),
  )
  return new McpServer(n, controllers)
}

/** A fresh random bearer token for `serveMcp` (256 bits from the OS, 64 hex digits). */
function newBearerToken() {
  return wrap(() => native.newBearerToken())
}

for (const [cls, method] of /** @type {const} */ ([
  [McpClient, 'close'],
  [McpServer, 'shutdown'],
])) {
  if (typeof Symbol.asyncDispose === 'symbol') {
    Object.defineProperty(cls.prototype, Symbol.asyncDispose, {
      value: function asyncDispose() {
        return this[method]()
      },
    })
  }
}

/** A store keeping sessions in this process's memory (lost when the process ends). */
class MemoryStore {
  constructor() {
    /** @internal */
    this.native = native.NativeStore.memory()
  }
  /** The ids of the stored sessions. */
  sessionIds() {
    return wrap(() => this.native.sessionIds())
  }
}

/** @param {any} reply */
/** The gate's view of who started a turn, without absent fields. */
function turnOrigin(origin) {
  if (!origin || origin.kind !== 'tab') return { kind: 'person' }
  const out = { kind: 'tab' }
  if (origin.tabId != null) out.tabId = origin.tabId
  if (origin.handle != null) out.handle = origin.handle
  return out
}

function gateReply(reply) {
  if (reply === true || reply === 'allow') return { allow: true }
  if (reply === false || reply === 'deny' || reply === undefined || reply === null) return { allow: false }
  if (typeof reply === 'object') {
    const allow = reply.allow === true || reply.decision === 'allow'
    return { allow, reason: allow || reply.reason == null ? undefined : String(reply.reason) }
  }
  return { allow: false, reason: `the gate answered ${JSON.stringify(reply)}; expected a boolean or {allow, reason}` }
}

/**
 * Adds tools (built-in tool sets and JS tools) and the gate to a native builder.
 * @param {any} b the NativeAgentBuilder
 * @param {any[]} tools
 * @param {any} gate
 * @param {Map<number, AbortController>} controllers the running JS tools' controllers
 * @param {Map<number, unknown>} errors fatal JS tool errors, kept for outcomes
 * @param {() => number} nextId
 */
function addToolsAndGate(b, tools, gate, controllers, errors, nextId) {
  b.abortHook((invocation) => {
    const c = controllers.get(invocation)
    if (c) {
      controllers.delete(invocation)
      c.abort(new AgentCoreError('the tool call was cancelled', 'cancelled'))
    }
  })
  for (const t of tools) {
    if (t instanceof ToolSet) {
      wrap(() => b.toolSet(t.native))
      continue
    }
    if (!t || t.kind !== 'agent-core.tool') {
      throw new ToolDefinitionError('every entry of `tools` must come from tool({...})', 'tool_invalid')
    }
    wrap(() =>
      b.tool(
        {
          name: t.name,
          description: t.description,
          parametersJson: JSON.stringify(t.parameters),
          gated: t.gated,
          parallelSafe: t.parallelSafe,
          timeoutMs: t.timeoutMs,
        },
        invoker(t, controllers, errors, nextId),
      ),
    )
  }
  if (gate !== undefined) {
    if (typeof gate !== 'function') throw new ConfigError('`gate` must be a function', 'invalid_argument')
    b.gate((input) => {
      const request = {
        sessionId: input.sessionId,
        callId: input.callId,
        tool: input.tool,
        arguments: JSON.parse(input.argumentsJson),
        origin: turnOrigin(input.origin),
      }
      let answer
      try {
        answer = gate(request)
      } catch (e) {
        return { allow: false, reason: `the gate threw: ${e instanceof Error ? e.message : String(e)}` }
      }
      if (answer !== null && typeof answer === 'object' && typeof answer.then === 'function') {
        return Promise.resolve(answer).then(gateReply, (e) => ({
          allow: false,
          reason: `the gate threw: ${e instanceof Error ? e.message : String(e)}`,
        }))
      }
      return gateReply(answer)
    })
  }
}

/** An LLM agent: a provider, tools, an optional store and gate, and the loop's limits. */
class Agent {
  #native
  #controllers = new Map()
  /** @type {Map<number, unknown>} */
  #errors = new Map()
  #nextErrorId = 1

  /** @param {any} options */
  constructor(options) {
    if (options === null || typeof options !== 'object') {
      throw new ConfigError('new Agent(options): options must be an object', 'invalid_argument')
    }
    const { provider, tools = [], gate, store, systemPrompt, config, onEvent, clarification } = options
    if (!provider || !provider.native) {
      throw new ConfigError('new Agent(options): `provider` is required (for example a ScriptedProvider)', 'config')
    }
    const b = new native.NativeAgentBuilder()
    wrap(() => b.provider(provider.native))
    if (store) wrap(() => b.store(store.native))
    if (systemPrompt !== undefined) b.systemPrompt(String(systemPrompt))
    if (clarification) wrap(() => b.clarification(true))
    if (config) wrap(() => b.config(config))
    addToolsAndGate(b, tools, gate, this.#controllers, this.#errors, () => {
      const id = this.#nextErrorId++
      if (this.#errors.size >= MAX_KEPT_ERRORS) {
        const oldest = this.#errors.keys().next().value
        if (oldest !== undefined) this.#errors.delete(oldest)
      }
      return id
    })
    if (onEvent !== undefined) {
      if (typeof onEvent !== 'function') throw new ConfigError('`onEvent` must be a function', 'invalid_argument')
      b.onEvent((event) => {
        try {
          onEvent(this._event(event))
        } catch (e) {
          // An observer that throws must not take the process down; report it like Node does.
          process.emitWarning(`agent-core: onEvent threw: ${e instanceof Error ? e.message : String(e)}`)
        }
      })
    }
    this.#native = wrap(() => b.build())
    /** @internal */
    this._builder = b
    /** @internal */
    this._store = store
  }

  /**
   * Creates a session.
   * @param {{ id?: string }} [options]
   */
  async createSession(options = {}) {
    const s = await wrap(() => this.#native.createSession(options.id))
    return new Session(s, this)
  }

  /**
   * Opens an existing session: one this agent has open, or one in its store.
   * @param {string} id
   */
  async openSession(id) {
    const s = await wrap(() => this.#native.openSession(id))
    return new Session(s, this)
  }

  /** The names of the agent's tools. */
  get toolNames() {
    return this.#native.toolNames()
  }

  /** Whether `close()` was called. */
  get closed() {
    return this.#native.closed
  }

  /** Cancels running turns and refuses new ones. Callbacks never keep the process alive. */
  close() {
    this.#native.close()
    for (const c of this.#controllers.values()) c.abort(new ClosedError('the agent was closed', 'closed'))
    this.#controllers.clear()
  }

  /** @internal @param {any} o */
  _outcome(o) {
    if (o && o.errorId !== undefined) {
      const cause = this.#errors.get(o.errorId)
      delete o.errorId
      if (cause !== undefined) o.cause = cause
    }
    return o
  }

  /** @internal @param {any} ev */
  _event(ev) {
    if (ev.outcome) this._outcome(ev.outcome)
    return ev
  }
}

/**
 * One agent session per browser tab, with short git-style handles, `send_to_tab` /
 * `read_tab` tools (off unless permitted), queueing for busy tabs and an auto-wake budget.
 */
class TabHub {
  #native
  #agent

  /** @internal */
  constructor(/** @type {any} */ n, /** @type {Agent} */ agent) {
    this.#native = n
    this.#agent = agent
  }

  /**
   * Builds a hub whose tabs' agents are made from `options` (the `Agent` options, plus
   * `autoWakeBudget`, `maxHeldMessages` (default 32: past it an agent's message is refused with
   * `TabQueueFullError`), and `sendToTab` / `readTab`, the default permissions of new tabs).
   * @param {any} options
   */
  static async create(options) {
    const { autoWakeBudget, maxHeldMessages, sendToTab, readTab, ...agentOptions } = options ?? {}
    const agent = new Agent(agentOptions)
    const store = agent._store
    const n = await wrap(() =>
      agent._builder.tabHub(store ? store.native : undefined, autoWakeBudget, sendToTab, readTab, maxHeldMessages),
    )
    return new TabHub(n, agent)
  }

  /**
   * Opens a tab; returns its id. Permissions default to the hub's.
   * @param {{ sendToTab?: boolean, readTab?: boolean }} [permissions]
   */
  openTab(permissions = {}) {
    return wrap(() => this.#native.openTab(permissions.sendToTab, permissions.readTab))
  }
  /** @param {string} tab */
  closeTab(tab) {
    return wrap(() => this.#native.closeTab(tab))
  }
  /** @param {string} tab */
  reopenTab(tab) {
    return wrap(() => this.#native.reopenTab(tab))
  }
  /**
   * Delivers a message: an idle tab starts a turn (`started`, with `run`), a busy one queues it
   * (`queued`), and agent messages past the auto-wake budget wait (`held`).
   *
   * `signal` cancels the turn this delivery started. An already-aborted signal delivers
   * nothing: the promise rejects with an `AgentCoreError` (code `cancelled`) and no turn starts.
   * A queued or held message is not affected by the signal (take it out with the tab's queue).
   * @param {string} tab
   * @param {string} text
   * @param {{ origin?: 'human' | 'agent', signal?: AbortSignal }} [options]
   */
  async deliver(tab, text, options = {}) {
    const signal = options.signal
    const refuse = () =>
      new AgentCoreError('the signal was aborted: nothing was delivered', 'cancelled', { cause: signal?.reason })
    if (signal && signal.aborted) throw refuse()
    const d = await wrap(() => this.#native.deliver(tab, text, options.origin))
    const n = d.run()
    const run = n ? new Run(n, this.#agent) : null
    if (signal && run) {
      if (signal.aborted) n.cancel()
      else {
        const onAbort = () => n.cancel()
        signal.addEventListener('abort', onAbort, { once: true })
        run.outcome.then(() => signal.removeEventListener('abort', onAbort))
      }
    }
    return {
      status: d.status,
      queueLen: d.queueLen,
      autoWakeBudget: d.autoWakeBudget,
      awaitingUser: d.awaitingUser,
      run,
    }
  }
  /** Resolves a handle or id prefix: `{ status: 'ok', tab, handle }`, `none` or `ambiguous`. @param {string} input */
  resolve(input) {
    return this.#native.resolve(input)
  }
  /** A tab's short handle. @param {string} tab */
  handle(tab) {
    return wrap(() => this.#native.handle(tab)) ?? null
  }
  /** Every tab, open and closed. */
  tabs() {
    return this.#native.tabs()
  }
  /** One tab, or null. @param {string} tab */
  tab(tab) {
    return wrap(() => this.#native.tab(tab))
  }
  /** @param {string} tab @param {{ sendToTab?: boolean, readTab?: boolean }} permissions */
  setPermissions(tab, permissions) {
    return wrap(() => this.#native.setPermissions(tab, Boolean(permissions.sendToTab), Boolean(permissions.readTab)))
  }
  /** What `read_tab` returns for a tab (its last answer and state). @param {string} tab */
  read(tab) {
    return wrap(() => this.#native.read(tab))
  }
  /** The session a tab owns (send through `deliver`, read through it). @param {string} tab */
  async session(tab) {
    return new Session(await wrap(() => this.#native.session(tab)), this.#agent)
  }
  /** Cancels a tab's running turn. @param {string} tab */
  cancel(tab) {
    return wrap(() => this.#native.cancel(tab))
  }
  /** Waits until a tab is idle; returns its info. @param {string} tab */
  waitIdle(tab) {
    return wrap(() => this.#native.waitIdle(tab))
  }
  /** Waits until every tab is idle. */
  waitAllIdle() {
    return this.#native.waitAllIdle()
  }
  /** The hub's events from now on (tab opened/closed, state changes, agent events, notices). */
  events() {
    const stream = this.#native.events()
    const agent = this.#agent
    return (async function* events() {
      try {
        for (;;) {
          const batch = await stream.next()
          if (batch === null) return
          for (const ev of batch) {
            if (ev.event) agent._event(ev.event)
            yield ev
          }
        }
      } finally {
        stream.close()
      }
    })()
  }
  /** Cancels running turns and refuses new ones. */
  close() {
    this.#agent.close()
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(Agent.prototype, Symbol.dispose, {
    value: function dispose() {
      this.close()
    },
  })
}

/** A conversation with the agent. Turns of one session run one after another. */
class Session {
  #native
  #agent

  /** @internal */
  constructor(/** @type {any} */ nativeSession, /** @type {Agent} */ agent) {
    this.#native = nativeSession
    this.#agent = agent
    /** The session's id (a UUID). */
    this.id = nativeSession.id
  }

  /**
   * Starts a turn. Returns at once; the turn runs in the background.
   * @param {string | { role?: 'user', content: any[] }} input text, or a whole user message
   * @param {{ signal?: AbortSignal }} [options] `signal` cancels the turn (an aborted one at once)
   */
  send(input, options = {}) {
    const signal = options.signal
    const aborted = signal ? signal.aborted : false
    const n =
      typeof input === 'string'
        ? wrap(() => this.#native.send(input, aborted))
        : wrap(() => this.#native.sendMessage(JSON.stringify({ role: 'user', ...input }), aborted))
    const run = new Run(n, this.#agent)
    if (signal && !aborted) {
      const onAbort = () => n.cancel()
      signal.addEventListener('abort', onAbort, { once: true })
      run.outcome.then(() => signal.removeEventListener('abort', onAbort))
    }
    return run
  }

  /** The question a turn of this session is parked on (`awaiting_user`), or `null`. */
  pendingClarification() {
    return this.#native.pendingClarification() ?? null
  }

  /**
   * Answers the pending question; the parked turn goes on in a new run. An answer that does
   * not fit the question is refused with a `ClarificationError` and the question stays pending.
   * @param {string} clarificationId
   * @param {string} answer
   * @param {{ signal?: AbortSignal }} [options]
   */
  answerClarification(clarificationId, answer, options = {}) {
    const n = wrap(() => this.#native.answerClarification(clarificationId, String(answer)))
    const run = new Run(n, this.#agent)
    const signal = options.signal
    if (signal) {
      if (signal.aborted) n.cancel()
      else {
        const onAbort = () => n.cancel()
        signal.addEventListener('abort', onAbort, { once: true })
        run.outcome.then(() => signal.removeEventListener('abort', onAbort))
      }
    }
    return run
  }

  /** Every stored message of the session, with sequence numbers. */
  async messages() {
    return JSON.parse(await wrap(() => this.#native.messagesJson()))
  }

  /** The messages the model would see on the next turn. */
  async modelHistory() {
    return JSON.parse(await wrap(() => this.#native.modelHistoryJson()))
  }
}

/** One turn, running in the background. */
class Run {
  #native
  #agent
  /** @type {Promise<any> | undefined} */
  #outcome

  /** @internal */
  constructor(/** @type {any} */ nativeRun, /** @type {Agent} */ agent) {
    this.#native = nativeRun
    this.#agent = agent
    /** The run's id. */
    this.id = nativeRun.id
    /** The session's id. */
    this.sessionId = nativeRun.sessionId
  }

  /** A snapshot of the run's progress: `{ state, iteration, currentTool, lastMessage, error }`. */
  status() {
    return this.#native.status()
  }

  /** Asks the run to stop; it ends `cancelled` promptly. */
  cancel() {
    this.#native.cancel()
  }

  /** Whether the run has finished. */
  get finished() {
    return this.#native.finished
  }

  /** The outcome, once the run ends (never rejects: look at `status`). */
  get outcome() {
    this.#outcome ??= this.#native.outcome().then((/** @type {any} */ o) => this.#agent._outcome(o))
    return this.#outcome
  }

  /**
   * The final answer text; throws unless the run ended `done`: the original error when a JS
   * tool threw a fatal error, a `RunError` otherwise.
   */
  async result() {
    const o = await this.outcome
    if (o.status === 'done') return o.finalText ?? ''
    if (o.cause !== undefined) throw o.cause
    const code = o.errorKind ?? o.status
    throw new RunError(o.error ?? `the run ended ${o.status}`, code, o)
  }

  /**
   * The run's events as an async iterator. The first call sees every event from `run_started`;
   * later calls see events from then on. Ends after the final event.
   */
  events() {
    const stream = this.#native.events()
    const agent = this.#agent
    return (async function* events() {
      try {
        for (;;) {
          const batch = await stream.next()
          if (batch === null) return
          for (const ev of batch) yield agent._event(ev)
        }
      } finally {
        stream.close()
      }
    })()
  }
}

module.exports = {
  Agent,
  Session,
  Run,
  ScriptedProvider,
  OpenAICompatible,
  Anthropic,
  Gemini,
  FallbackRouter,
  providerFromEnv,
  MemoryStore,
  SqliteStore,
  KeyStore,
  TabHub,
  ToolSet,
  tool,
  fsTools,
  pageTools,
  McpClient,
  McpServer,
  serveMcp,
  newBearerToken,
  AgentCoreError,
  ConfigError,
  ToolDefinitionError,
  SessionNotFoundError,
  SessionExistsError,
  StoreError,
  ClosedError,
  ClarificationError,
  RunError,
  ToolError,
  FatalToolError,
  HostError,
  TabQueueFullError,
}
