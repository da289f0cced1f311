'use strict'
/**
 * MCP: a client whose server's tools become a ToolSet, and a server for this process's tools.
 * @module agent-core/mcp
 */
const native = require('../index.js')
const { wrap, ConfigError, ClosedError } = require('./errors.js')
const { ToolSet } = require('./tools.js')
const { addToolsAndGate } = require('./gate.js')

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
   * Starts (or connects to) the server, completes the handshake and lists its tools. Besides
   * `alias`, the options are the `McpServerEntry` of the options format (an `mcpServers` entry
   * in camelCase), read by the native module.
   * @param {any} options
   */
  static async connect(options) {
    if (!options || typeof options !== 'object' || typeof options.alias !== 'string') {
      throw new ConfigError('McpClient.connect(options): `alias` (a string) is required', 'invalid_argument')
    }
    const { alias, ...entry } = options
    const n = await wrap(() => native.mcpConnect(alias, entry))
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
  /** @internal @param {any} n @param {Map<number, { abort(reason: unknown): void }>} controllers */
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
  /** @type {Map<number, { abort(reason: unknown): void }>} */
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

module.exports = { McpClient, McpServer, serveMcp, newBearerToken }
