/** MCP: a client whose server's tools become a ToolSet, and a server for this process's tools. */
import type { Gate } from './gate.js'
import type { Tool, ToolSet } from './tools.js'

/** How to reach an MCP server: `command` (stdio child process) or `url` (streamable HTTP). */
export interface McpConnectOptionsBase {
  /** Prefix of the tool names (`alias__tool`): 1 to 32 of `[a-zA-Z0-9_-]`, without `__`. */
  alias: string
  /** Longest a tool call may take, in ms (default 60 000); on expiry the server is told to cancel. */
  callTimeoutMs?: number
  /** Longest the start and handshake may take, in ms (default 30 000). */
  connectTimeoutMs?: number
  /**
   * Longest a `tools/list` (all its pages together) may take, in ms (default 30 000): at
   * connect, after the list changed and after a reconnect.
   */
  requestTimeoutMs?: number
  /** Let tools the server marks `readOnlyHint` run without the gate (default false: all gated). */
  trustReadOnlyHints?: boolean
}
/** A server started as a child process speaking MCP over stdio. */
export interface McpStdioOptions extends McpConnectOptionsBase {
  command: string
  args?: string[]
  /** Variables for the child, on top of the safe ones it inherits (PATH, HOME, ...). */
  env?: Record<string, string>
  /** Inherit the host's whole environment (default false: API keys do not leak). */
  inheritEnv?: boolean
  cwd?: string
  url?: never
}
/** A server reached over MCP's streamable HTTP. */
export interface McpHttpOptions extends McpConnectOptionsBase {
  url: string
  /** Headers sent with every request, e.g. `{ Authorization: \`Bearer ${server.bearerToken}\` }`. */
  headers?: Record<string, string>
  command?: never
}
export type McpConnectOptions = McpStdioOptions | McpHttpOptions

/** A connection to an MCP server; its tools are a `ToolSet` for an agent's `tools`. */
export declare class McpClient {
  private constructor()
  /** Starts (or connects to) the server, completes the handshake and lists its tools. */
  static connect(options: McpConnectOptions): Promise<McpClient>
  readonly alias: string
  /** The server's current tools (named `alias__tool`). */
  tools(): ToolSet
  readonly toolNames: string[]
  /** Lists the server's tools again. */
  refreshTools(): Promise<void>
  serverInfo(): Promise<{ name: string | null; version: string | null; protocolVersion: string; instructions: string | null } | null>
  isConnected(): Promise<boolean>
  /** Closes the connection (and stops a stdio server); its tools then fail for the model. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Options of `serveMcp`. */
export interface ServeMcpOptions {
  /** Built-in tool sets (fsTools, an McpClient's tools, ...) and JS tools. */
  tools: Array<Tool<any> | ToolSet>
  /** Asked before every call of a gated tool; without one, gated tools are denied. */
  gate?: Gate
  /** The server's name in the handshake (default `agent-core`). */
  name?: string
  instructions?: string
  /** A loopback address (default `127.0.0.1`); other addresses are refused. */
  host?: string
  /** Default 0: any free port. */
  port?: number
  /**
   * Require `Authorization: Bearer <token>` on every request (401 otherwise): a string, or
   * `true` for a fresh random one (`newBearerToken()`). Without one, any local process can
   * call the tools (still through the gate).
   */
  bearerToken?: string | true
  /**
   * Browser origins (`scheme://host[:port]`) besides the server's own loopback origin that may
   * call it; requests with another `Origin` header get 403.
   */
  allowedOrigins?: string[]
}

/** A running MCP endpoint. */
export declare class McpServer {
  private constructor()
  /** The endpoint URL, such as `http://127.0.0.1:41234/mcp`. */
  readonly url: string
  /** The token clients must send as `Authorization: Bearer <token>`, or null. */
  readonly bearerToken: string | null
  /** Stops the server and ends every session. */
  shutdown(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Serves tools over MCP's streamable HTTP on loopback, with argument validation and the gate. */
export declare function serveMcp(options: ServeMcpOptions): Promise<McpServer>
/** A fresh random bearer token (256 bits from the operating system, 64 hex digits). */
export declare function newBearerToken(): string
