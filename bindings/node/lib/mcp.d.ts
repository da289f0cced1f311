/** MCP: a client whose server's tools become a ToolSet, and a server for this process's tools. */
import type { Gate } from './gate.js'
import type { Tool, ToolSet } from './tools.js'

/**
 * One MCP server: the `McpServerEntry` of the options format (an entry of the `mcpServers`
 * JSON most MCP hosts write), in camelCase. `command` (a child process over stdio) or `url`
 * (streamable HTTP); an unknown key is refused with a `ConfigError`.
 */
export interface McpServerEntry {
  /** `stdio` or `http` (also `streamable-http`); inferred from `command` or `url` when absent. */
  type?: string | null
  /** The program of a stdio server. */
  command?: string | null
  /** Its arguments. */
  args?: string[]
  /** Variables for the child, on top of the safe ones it inherits (PATH, HOME, ...). */
  env?: Record<string, string>
  /** Inherit the host's whole environment (default false: API keys do not leak). */
  inheritEnv?: boolean
  /** The child's working directory. */
  cwd?: string | null
  /** The endpoint of a streamable HTTP server, such as `http://127.0.0.1:3001/mcp`. */
  url?: string | null
  /** Headers sent with every HTTP request, e.g. `{ Authorization: \`Bearer ${server.bearerToken}\` }`. */
  headers?: Record<string, string>
  /** Longest a tool call may take, in ms (default 60 000); on expiry the server is told to cancel. */
  callTimeoutMs?: number | null
  /** Longest the start and handshake may take, in ms (default 30 000). */
  connectTimeoutMs?: number | null
  /**
   * Longest a `tools/list` (all its pages together) may take, in ms (default 30 000): at
   * connect, after the list changed and after a reconnect.
   */
  requestTimeoutMs?: number | null
  /** Let tools the server marks `readOnlyHint` run without the gate (default false: all gated). */
  trustReadOnlyHints?: boolean
  /** Caps on what a tool returns. */
  caps?: OutputCaps | null
  /** First reconnect wait, in ms (default 500). */
  backoffInitialMs?: number | null
  /** Longest reconnect wait, in ms (default 30 000). */
  backoffMaxMs?: number | null
  /** Roots (`file://` URIs) offered to the server. */
  roots?: string[]
  /** Marks an entry of an `mcpServers` file as left out; `McpClient.connect` refuses an entry marked `true`. */
  disabled?: boolean
}
/** Caps on what an MCP tool returns (`McpServerEntry.caps`). */
export interface OutputCaps {
  /** Base64 characters kept per image (default 8 MiB); larger images become a note. */
  maxImageBase64?: number
  /** Characters of text kept across all text parts (default 200 000). */
  maxTextChars?: number
}
/** How to reach an MCP server: an `McpServerEntry` and the alias its tools are named by. */
export interface McpConnectOptions extends McpServerEntry {
  /** Prefix of the tool names (`alias__tool`): 1 to 32 of `[a-zA-Z0-9_-]`, without `__`. */
  alias: string
}

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
