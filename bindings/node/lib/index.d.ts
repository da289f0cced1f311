/**
 * agent-core for Node.js: the hand-written types of the public API.
 *
 * ```ts
 * import { Agent, ScriptedProvider, tool, type AgentEvent } from 'agent-core'
 * ```
 * @packageDocumentation
 */

// ---------------------------------------------------------------------------------------------
// Values

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
/** A JSON Schema object (the arguments of a tool). */
export type JsonSchema = { [key: string]: unknown }

/** Token counts reported by the provider. */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cachedInputTokens: number
  reasoningTokens: number
}

/** How a turn ended. */
export type OutcomeStatus = 'done' | 'denied' | 'capped' | 'cancelled' | 'error' | 'awaiting_user'

/** The result of a turn. */
export interface Outcome {
  status: OutcomeStatus
  /** The last assistant text of the turn (the answer, for `done`). */
  finalText: string | null
  /** Model calls made. */
  iterations: number
  /** Tool calls requested by the model (run or not). */
  toolCalls: number
  usage: Usage
  /** What went wrong, for `error` (and the denial, for `denied`). */
  error: string | null
  /** A stable name of the error's kind: `provider.timeout`, `tool.fatal`, `store`, ... */
  errorKind: string | null
  /** The original error a JS tool threw as fatal (`FatalToolError` or any error with `fatal: true`). */
  cause?: unknown
}

/** What a run is doing. */
export type RunState = 'idle' | 'thinking' | 'tool_call' | 'complete' | 'error' | 'cancelled' | 'awaiting_user'

/** A cheap snapshot of a run's progress. */
export interface RunStatus {
  state: RunState
  /** The current model call, from 1 (0 before the first). */
  iteration: number
  /** The tool running now, if any. */
  currentTool: string | null
  /** The latest assistant text. */
  lastMessage: string | null
  /** The error, once the run failed. */
  error: string | null
}

// ---------------------------------------------------------------------------------------------
// Events

interface EventBase<T extends string> {
  type: T
  /** The session the event belongs to. */
  sessionId: string
}

/** The turn started. */
export interface RunStartedEvent extends EventBase<'run_started'> {
  runId: string
  /** Who started the turn: the person, or another tab's agent. */
  origin: TurnOrigin
}
/** A model call is being made (one per iteration). */
export interface ModelCallStartedEvent extends EventBase<'model_call_started'> { iteration: number }
/** A router reported which route served the call. */
export interface ModelRoutedEvent extends EventBase<'model_routed'> { provider: string; model: string }
/** A piece of answer text. */
export interface ContentTokenEvent extends EventBase<'content_token'> { text: string }
/** A piece of reasoning text. */
export interface ReasoningTokenEvent extends EventBase<'reasoning_token'> { text: string }
/** A model call finished. */
export interface ModelCallCompletedEvent extends EventBase<'model_call_completed'> {
  iteration: number
  usage: Usage | null
}
/** A tool started running. */
export interface ToolCallStartedEvent extends EventBase<'tool_call_started'> {
  callId: string
  name: string
  arguments: Json
}
/** A tool finished with a result. */
export interface ToolCallSucceededEvent extends EventBase<'tool_call_succeeded'> {
  callId: string
  name: string
  /** The result as the model sees it (after the cap). */
  output: string
  truncated: boolean
  durationMs: number
}
/** A tool call failed or never ran (invalid arguments, unknown tool, timeout). */
export interface ToolCallFailedEvent extends EventBase<'tool_call_failed'> {
  callId: string
  name: string
  error: string
  /** Whether the failure ends the turn. */
  fatal: boolean
}
/** The gate denied a call (or no gate was configured). */
export interface ToolCallDeniedEvent extends EventBase<'tool_call_denied'> {
  callId: string
  name: string
  reason: string
}
/** Compaction of older turns started. */
export interface CompactionRunningEvent extends EventBase<'compaction_running'> {
  estimatedTokens: number
  budgetTokens: number
}
/** Compaction finished. */
export interface CompactionCompletedEvent extends EventBase<'compaction_completed'> {
  estimatedTokens: number
  method: string
}
/** The model asked the person a question; the turn is parked until it is answered. */
export interface ClarificationPendingEvent extends EventBase<'clarification_pending'> {
  clarificationId: string
  question: Json
}
/** The person answered. */
export interface ClarificationRespondedEvent extends EventBase<'clarification_responded'> {
  clarificationId: string
  answer: string
}
/** The question expired unanswered. */
export interface ClarificationExpiredEvent extends EventBase<'clarification_expired'> { clarificationId: string }
/** The question was dismissed. */
export interface ClarificationDismissedEvent extends EventBase<'clarification_dismissed'> {
  clarificationId: string
  reason: string
}
/** A message for a busy tab was queued. */
export interface MessageQueuedEvent extends EventBase<'message_queued'> { queueLen: number; origin: string }
/** The turn ended normally (`done`, `denied` or `awaiting_user`). */
export interface RunCompletedEvent extends EventBase<'run_completed'> { outcome: Outcome }
/** The turn ended with an error. */
export interface RunFailedEvent extends EventBase<'run_failed'> { outcome: Outcome }
/** The turn was cancelled. */
export interface RunCancelledEvent extends EventBase<'run_cancelled'> { outcome: Outcome }
/** The turn hit the iteration or tool-call cap. */
export interface RunCappedEvent extends EventBase<'run_capped'> { outcome: Outcome }

/** One event of a run: narrow it with `switch (event.type)`. */
export type AgentEvent =
  | RunStartedEvent
  | ModelCallStartedEvent
  | ModelRoutedEvent
  | ContentTokenEvent
  | ReasoningTokenEvent
  | ModelCallCompletedEvent
  | ToolCallStartedEvent
  | ToolCallSucceededEvent
  | ToolCallFailedEvent
  | ToolCallDeniedEvent
  | CompactionRunningEvent
  | CompactionCompletedEvent
  | ClarificationPendingEvent
  | ClarificationRespondedEvent
  | ClarificationExpiredEvent
  | ClarificationDismissedEvent
  | MessageQueuedEvent
  | RunCompletedEvent
  | RunFailedEvent
  | RunCancelledEvent
  | RunCappedEvent

/** The `type` of every event. */
export type AgentEventType = AgentEvent['type']
/** The final event of a run. */
export type FinalEvent = RunCompletedEvent | RunFailedEvent | RunCancelledEvent | RunCappedEvent

// ---------------------------------------------------------------------------------------------
// Messages

/** A text or image part of a message. */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; source: { kind: 'base64'; data: string } | { kind: 'url'; url: string } }

/** A conversation message, as stored. */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: ContentPart[]
  toolCalls?: { id: string; name: string; arguments: string; signature?: string }[]
  toolCallId?: string
  toolName?: string
  isError?: boolean
  [key: string]: unknown
}

/** A stored message with its sequence number. */
export interface StoredMessage {
  seq: number
  message: Message
  createdAtMs: number
}

// ---------------------------------------------------------------------------------------------
// Providers and stores

/** An error a scripted step fails with. */
export interface ScriptedError {
  kind:
    | 'rate_limited'
    | 'timeout'
    | 'transport'
    | 'server'
    | 'auth'
    | 'bad_request'
    | 'context_overflow'
    | 'malformed'
    | 'config'
  message?: string
  /** HTTP status, for `server` and `auth`. */
  status?: number
  /** For `rate_limited`. */
  retryAfterMs?: number
}

/** A scripted answer: text, reasoning and tool calls (arguments as an object, or raw text). */
export interface ScriptedReply {
  text?: string
  reasoning?: string
  toolCalls?: { name: string; arguments?: Json }[]
  usage?: Partial<Usage>
}

/** What a `ScriptedProvider` does for one model call. */
export type ScriptStep =
  | ScriptedReply
  /** Fail the call (after streaming the reply's text, when it has some). */
  | (ScriptedReply & { error: ScriptedError })
  /** Wait (cancellable), then do `then`. */
  | { delayMs: number; then: ScriptStep }
  /** Stream the text, then never finish (until cancelled). */
  | { hang: string }

/** A model provider an `Agent` can use. */
export interface Provider {
  /** The provider's id (`scripted`, `openai-compatible`, ...). */
  readonly id: string
}

/** A recorded model request. */
export interface ModelRequest {
  system: string | null
  messages: Message[]
  tools: { name: string; description: string; parameters: JsonSchema }[]
  maxOutputTokens: number | null
  temperature: number | null
}

/**
 * A provider that replays a fixed script, one step per model call. **Not a language model**:
 * for tests, benchmarks and offline demos. When the script runs out, the call fails.
 */
export declare class ScriptedProvider implements Provider {
  /** `recordRequests` (default true) keeps every request for `requests()`. */
  constructor(steps: ScriptStep[], options?: { recordRequests?: boolean })
  /**
   * Steps chosen by a synchronous function of the request, once per model call (a script that
   * plans from what the tools returned; still not a model).
   */
  static fromFn(choose: (request: ModelRequest) => ScriptStep): ScriptedProvider
  readonly id: string
  /** Model calls made so far. */
  readonly callCount: number
  /** The requests received so far, oldest first. */
  requests(): ModelRequest[]
}

/** How to reach a real model service. */
export interface ProviderOptions {
  /** The model name sent to the provider. */
  model: string
  /** The API key (omit or leave empty for local servers that need none). */
  apiKey?: string
  /** Overrides the default base URL (for example `http://127.0.0.1:8080/v1`). */
  baseUrl?: string
  /** Stream over SSE (default true). */
  streaming?: boolean
  /** The model's context window in tokens, when known (used by compaction). */
  maxInputTokens?: number
  /** Extra request headers. */
  headers?: Record<string, string>
  /** Attempts per call, retries included. */
  maxAttempts?: number
  /** The whole call's timeout, in ms. */
  callTimeoutMs?: number
}

/** OpenAI Chat Completions and every server that copies it (OpenRouter, vLLM, llama.cpp, ...). */
export declare class OpenAICompatible implements Provider {
  constructor(options: ProviderOptions)
  readonly id: string
  readonly model: string
}
/** Anthropic Messages. */
export declare class Anthropic implements Provider {
  constructor(options: ProviderOptions)
  readonly id: string
  readonly model: string
}
/** Google Gemini generateContent (`baseUrl` is ignored). */
export declare class Gemini implements Provider {
  constructor(options: ProviderOptions)
  readonly id: string
  readonly model: string
}
/** Tries the providers in order: a retryable failure before any content moves to the next route. */
export declare class FallbackRouter implements Provider {
  constructor(primary: Provider, ...fallbacks: Provider[])
  readonly id: string
  readonly model: string
}
/** The provider `LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY` and `LLM_BASE_URL` describe; throws a `ConfigError` naming what is missing. */
export declare function providerFromEnv(): Provider & { readonly model: string }

/** Where sessions are persisted. */
export interface Store {}

/** A store keeping sessions in a SQLite file (WAL; survives restarts; an interrupted turn is repaired on open). */
/** How a SqliteStore writes. */
export interface SqliteStoreOptions {
  /** `normal` (default: survives the process being killed) or `full` (also a power loss). */
  durability?: 'normal' | 'full'
  /** Queue the loop's writes and commit them in groups (default true). */
  writeBehind?: boolean
  /** The longest wait for more writes before a group is committed, in ms (default 2). */
  groupCommitDelayMs?: number
  /** Caps the database file; a write past it fails like a full disk and ends the turn. */
  maxSizeBytes?: number
}

export declare class SqliteStore implements Store {
  private constructor()
  /**
   * Opens (or creates) the database at `path`. The loop's writes are queued and committed in
   * groups; a turn's outcome is returned once everything it wrote is durable.
   */
  static open(path: string, options?: SqliteStoreOptions): Promise<SqliteStore>
  /** The database file. */
  readonly path: string
  /** The ids of the stored sessions. */
  sessionIds(): Promise<string[]>
}

/** A store keeping sessions in this process's memory. */
export declare class MemoryStore implements Store {
  constructor()
  /** The ids of the stored sessions. */
  sessionIds(): Promise<string[]>
}

/** Encrypts API keys for the key store (synchronous; Electron's `safeStorage` fits). */
export interface Crypt {
  isEncryptionAvailable(): boolean
  encryptString(plaintext: string): Uint8Array
  decryptString(ciphertext: Uint8Array): string
}

/** API keys, one per provider, encrypted in a SqliteStore's database; never stored in plaintext. */
export declare class KeyStore {
  private constructor()
  static create(store: SqliteStore, crypt: Crypt, options?: { providers?: string[] }): KeyStore
  readonly providers: string[]
  setKey(provider: string, key: string): Promise<void>
  getKey(provider: string): Promise<string | null>
  status(): Promise<{ provider: string; usable: boolean; stored: boolean }[]>
  clearKey(provider: string): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Tools

/** What a tool call knows about where it runs. */
export interface ToolContext {
  sessionId: string
  /** The call's id, as the model gave it. */
  callId: string
  /** Aborted when the turn is cancelled, the call times out or the agent closes. */
  signal: AbortSignal
}

/** What a tool may return: text, JSON-serializable data (sent as JSON), or nothing (`ok`). */
export type ToolResult = string | number | boolean | object | null | undefined | void

/** A zod (>= 3.25) schema, structurally. */
export interface ZodLike<T = unknown> {
  safeParse(data: unknown): { success: true; data: T } | { success: false; error: unknown }
}
/** The parsed type of a zod schema. */
export type InferZod<S> = S extends { safeParse(data: unknown): infer R }
  ? Extract<R, { success: true }> extends { data: infer T }
    ? T
    : unknown
  : unknown

interface ToolOptionsBase<A> {
  /** Unique name: 1-64 letters, digits, `_` or `-`. */
  name: string
  /** What the tool does, written for the model. */
  description?: string
  /** Whether the agent's gate must allow each call first (default false). */
  gated?: boolean
  /** Whether it may run alongside other parallel-safe tools (default false). */
  parallelSafe?: boolean
  /** The tool's own timeout (default: the agent's `toolTimeoutMs`). */
  timeoutMs?: number
  /**
   * Runs the tool, sync or async. A thrown error (or rejected promise) becomes an error result
   * the model sees; a `FatalToolError` (or any error with `fatal: true`) ends the turn.
   */
  execute(args: A, context: ToolContext): ToolResult | Promise<ToolResult>
}

/** A tool whose arguments are described by an explicit JSON Schema. */
export interface JsonSchemaToolOptions<A> extends ToolOptionsBase<A> {
  parameters?: JsonSchema
  /** A zod schema the arguments are also parsed with (refinements, transforms). */
  schema?: ZodLike<A>
}

/** A tool whose arguments come from a zod schema (JSON Schema derived with zod 4). */
export interface ZodToolOptions<S extends ZodLike> extends ToolOptionsBase<InferZod<S>> {
  parameters: S
}

/** A tool definition, for `new Agent({ tools })`. */
export interface Tool<A = unknown> {
  readonly kind: 'agent-core.tool'
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly gated: boolean
  readonly parallelSafe: boolean
  readonly timeoutMs: number | undefined
  readonly execute: (args: A, context: ToolContext) => ToolResult | Promise<ToolResult>
}

/** Defines a tool whose arguments come from a zod schema: `args` is typed from it. */
export declare function tool<S extends ZodLike>(options: ZodToolOptions<S>): Tool<InferZod<S>>
/** Defines a tool with an explicit JSON Schema (type `args` with the type parameter). */
export declare function tool<A = Record<string, any>>(options: JsonSchemaToolOptions<A>): Tool<A>

/** A tool's spec as the loop sees it. */
export interface ToolSpec {
  name: string
  description: string
  parameters: JsonSchema
  gated: boolean
  parallelSafe: boolean
  timeout: number | null
}

/** A group of built-in tools, added with `tools: [...]`. */
export declare class ToolSet {
  private constructor()
  readonly kind: 'agent-core.toolset'
  readonly specs: ToolSpec[]
  readonly names: string[]
  /** The same tools with `gated` set for the named ones. */
  withGated(names: string[], gated: boolean): ToolSet
}

/** Options of the filesystem and shell tools. */
export interface FsToolsOptions {
  /** Confine every path to this directory (relative paths only, no `..`, no symlinks). */
  root?: string
  /** No confinement at all: must be chosen explicitly when `root` is absent. */
  unrestricted?: boolean
  maxReadBytes?: number
  maxListEntries?: number
  maxShellOutput?: number
  /** Cap on the content one fs_write call writes, in bytes (default 10 MiB); larger writes are refused. */
  maxWriteBytes?: number
  /** What shell_exec's commands inherit and get set (default: only a safe list of variables). */
  shellEnv?: ShellEnv
}
/** The environment shell_exec's commands get. By default only a safe list (PATH, HOME, LANG, ...). */
export interface ShellEnv {
  /** Inherit this process's whole environment, secrets included (default false). */
  inheritAll?: boolean
  /** More variables to inherit, by exact name, on top of the safe list. */
  passthrough?: string[]
  /** Variables set for every command (they win over inherited ones). */
  set?: Record<string, string>
}
/** fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec (writes, deletes and the shell are gated). */
export declare function fsTools(options: FsToolsOptions): ToolSet

// ---------------------------------------------------------------------------------------------
// MCP

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

/** A tab as the host reports it. */
export interface TabInfo {
  id: string
  url: string
  title: string
  active: boolean
}

/**
 * A browser the page tools act on, written in JS (puppeteer, playwright, Electron, ...). `tab`
 * absent means the active tab. Throw a `HostError` with a code to say what went wrong.
 */
export interface BrowserHost {
  /** Evaluates a JS expression in the page (awaiting promises) and returns its JSON value. */
  evaluate(expression: string, tab?: string): Json | Promise<Json>
  navigate(url: string, tab?: string): void | Promise<void>
  /** Waits until the page is quiet (optional: a settle script is evaluated otherwise). */
  waitSettled?(timeoutMs: number, tab?: string): void | Promise<void>
  tabs(): TabInfo[] | Promise<TabInfo[]>
  openTab(url?: string): TabInfo | Promise<TabInfo>
  closeTab(tab: string): void | Promise<void>
  activateTab(tab: string): void | Promise<void>
  /** Turns what a person typed into a URL (optional). */
  resolveAddress?(input: string): string | null | Promise<string | null>
}

/** Options of the page tools. */
export interface PageToolsOptions {
  /** Where a search phrase goes; `{}` is replaced by the encoded phrase. */
  searchTemplate?: string
  /** How long to wait for a page to settle after an action, in ms (default 5000). */
  settleTimeoutMs?: number
  /** Cap on any result, in characters (default 20 000). */
  maxChars?: number
  /** Most element lines per page_read page (default 200). */
  maxElements?: number
  /** Let page_scrape fetch loopback addresses over `http://` too (tests, local development). */
  scrapeLoopbackHttp?: boolean
  /** Let page_scrape fetch loopback addresses (127.0.0.0/8, ::1) over https. */
  scrapeAllowLoopback?: boolean
  /** Let page_scrape fetch private, link-local and other non-public addresses over https. */
  scrapeAllowPrivate?: boolean
  /** Extra root certificates page_scrape trusts, PEM text each (a private CA, a test server's). */
  scrapeExtraRootsPem?: string[]
}
/**
 * page_read, page_text, page_scrape, page_navigate, page_click, page_fill, page_select,
 * tabs_list, tab_open, tab_activate, tab_close over a JS BrowserHost (actions are gated).
 * page_scrape is gated too and fetches public https addresses only unless the `scrape*`
 * options allow more.
 */
export declare function pageTools(host: BrowserHost, options?: PageToolsOptions): ToolSet

// ---------------------------------------------------------------------------------------------
// The gate

/**
 * Who started a turn: the person, or another tab's agent (through `send_to_tab`). A turn
 * another tab started does not carry the person's authority.
 */
export type TurnOrigin = { kind: 'person' } | { kind: 'tab'; tabId?: string; handle?: string }

/** A gated tool call waiting for consent. */
export interface GateRequest {
  sessionId: string
  callId: string
  tool: string
  arguments: Json
  /** Who started the turn that asks: a gate should say so, or refuse, for another tab. */
  origin: TurnOrigin
}

/** The gate's answer: `true`/`'allow'` allows; `false`/`'deny'` denies; or an object with a reason. */
export type GateAnswer =
  | boolean
  | 'allow'
  | 'deny'
  | { allow: boolean; reason?: string }
  | { decision: 'allow' | 'deny'; reason?: string }

/** Decides each call of a gated tool, sync or async. A gate that throws denies the call. */
export type Gate = (request: GateRequest) => GateAnswer | Promise<GateAnswer>

// ---------------------------------------------------------------------------------------------
// Agents, sessions, runs

/** The loop's limits. Every field has a default. */
export interface AgentConfig {
  /** Model calls per turn before the turn ends `capped` (default 100). */
  maxIterations?: number
  /** Tool calls per turn before the turn ends `capped` (default unlimited). */
  maxToolCalls?: number
  /** The whole model call, in ms (default 180 000). */
  modelTimeoutMs?: number
  /** A tool call, in ms, unless the tool sets its own (default 60 000). */
  toolTimeoutMs?: number
  /** Parallel-safe tools running at once (default 3). */
  maxParallelTools?: number
  /** Characters of a tool result sent to the model (default 20 000). */
  resultCapChars?: number
  /** What a gate denial does: end the turn `denied` (default) or tell the model and go on. */
  onDenial?: 'end_turn' | 'tell_model'
  /** Events buffered per run for slow iterators (default 1024). */
  eventBuffer?: number
  /** Upper bound on generated tokens per model call. */
  maxOutputTokens?: number
  /** Sampling temperature. */
  temperature?: number
  /** How long a clarification question waits for an answer, in ms (default 1 800 000). */
  clarificationTtlMs?: number
  /** Whether older turns are compacted when the context fills up (default true). */
  compaction?: boolean
  /** Compact when the estimated input exceeds this share of the window (default 0.7). */
  compactionRatio?: number
  /** The model's input window in tokens (default: ask the provider). */
  maxInputTokens?: number
}

/** Everything an agent is made of. Only `provider` is required. */
export interface AgentOptions {
  provider: Provider
  tools?: (Tool<any> | ToolSet)[]
  /** Decides gated calls. Without one, gated calls are denied and never run. */
  gate?: Gate
  /** Where sessions are persisted (default: memory of this agent only). */
  store?: Store
  systemPrompt?: string
  config?: AgentConfig
  /** Offers the model the built-in `ask_clarification` tool (default false). */
  clarification?: boolean
  /** Sees every event of every run, in order. Keep it fast. */
  onEvent?: (event: AgentEvent) => void
}

/** A question the model asked the person (`ask_clarification`). */
export interface Clarification {
  id: string
  callId: string
  /** `confirm` (yes/no), `choice` (one of `options`) or `input` (free text). */
  kind: 'confirm' | 'choice' | 'input'
  title: string | null
  question: string
  options: string[]
  askedAtMs: number
  expiresAtMs: number
  /** Who started the turn that asked (the resumed turn acts for them too). */
  origin: TurnOrigin
}

/** Options of a turn. */
export interface SendOptions {
  /** Cancels the turn when aborted (an already aborted signal ends it at once). */
  signal?: AbortSignal
}

/** An LLM agent: a provider, tools, an optional store and gate, and the loop's limits. */
export declare class Agent {
  constructor(options: AgentOptions)
  /** Creates a session, with a random UUID unless `id` is given. */
  createSession(options?: { id?: string }): Promise<Session>
  /** Opens an existing session: one this agent has open, or one in its store. */
  openSession(id: string): Promise<Session>
  /** The names of the agent's tools. */
  readonly toolNames: string[]
  /** Whether `close()` was called. */
  readonly closed: boolean
  /** Cancels running turns and refuses new ones. */
  close(): void
  [Symbol.dispose](): void
}

/** A conversation with the agent. Turns of one session run one after another. */
export declare class Session {
  private constructor()
  /** The session's id (a UUID). */
  readonly id: string
  /** Starts a turn with a text message. Returns at once; the turn runs in the background. */
  send(text: string, options?: SendOptions): Run
  /** Starts a turn with a whole user message (several parts, images). */
  send(message: { role?: 'user'; content: ContentPart[] }, options?: SendOptions): Run
  /** The question a turn of this session is parked on (`awaiting_user`), or `null`. */
  pendingClarification(): Clarification | null
  /** Answers the pending question; the parked turn goes on in a new run. */
  answerClarification(clarificationId: string, answer: string, options?: SendOptions): Run
  /** Every stored message of the session, with sequence numbers. */
  messages(): Promise<StoredMessage[]>
  /** The messages the model would see on the next turn. */
  modelHistory(): Promise<Message[]>
}

/** One turn, running in the background. */
export declare class Run {
  private constructor()
  readonly id: string
  readonly sessionId: string
  /** A cheap snapshot of the run's progress. */
  status(): RunStatus
  /** Asks the run to stop; it ends `cancelled` promptly. */
  cancel(): void
  /** Whether the run has finished. */
  readonly finished: boolean
  /** The outcome, once the run ends. Never rejects: look at `status`. */
  readonly outcome: Promise<Outcome>
  /**
   * The final text; rejects unless the run ended `done`: with the original error when a JS tool
   * threw a fatal one, else with a `RunError`.
   */
  result(): Promise<string>
  /** The run's events; the first call sees every event. Ends after the final event. */
  events(): AsyncGenerator<AgentEvent, void, undefined>
}

// ---------------------------------------------------------------------------------------------
// Tabs

/** Which tab tools a tab's agent gets (both off by default). */
export interface TabPermissions {
  sendToTab?: boolean
  readTab?: boolean
}

/** A tab as the hub sees it. */
export interface TabHubTab {
  id: string
  handle: string | null
  sessionId: string
  open: boolean
  state: string
  queueLen: number
  autoWakeBudget: number
  held: boolean
  awaitingUser: boolean
  permissions: { sendToTab: boolean; readTab: boolean }
}

/** What a delivery did. */
export interface Delivery {
  status: 'started' | 'queued' | 'held'
  queueLen: number
  autoWakeBudget: number
  awaitingUser: boolean
  /** The turn that started, for `started`. */
  run: Run | null
}

/** An event of the hub: `tab_opened`, `tab_closed`, `state_changed`, `agent` (with `event`) or `notice`. */
export interface TabEvent {
  tabId: string
  type: string
  /** For `agent`: the tab agent's event. */
  event?: AgentEvent
  [key: string]: unknown
}

/** Options of a tab hub: the options of every tab's agent, plus the hub's own. */
export interface TabHubOptions extends AgentOptions {
  /** Agent-to-agent wakes of an idle tab allowed before a human message. */
  autoWakeBudget?: number
  /**
   * Messages from other tabs' agents one tab's queue may hold (default 32); past it such a
   * message is refused (`TabQueueFullError`). Messages from the person are never refused.
   */
  maxHeldMessages?: number
  /** Whether new tabs get `send_to_tab`. */
  sendToTab?: boolean
  /** Whether new tabs get `read_tab`. */
  readTab?: boolean
}

/**
 * One agent session per browser tab: short git-style handles, `send_to_tab` / `read_tab`
 * (off unless permitted), queueing for busy tabs and an auto-wake budget.
 */
export declare class TabHub {
  private constructor()
  static create(options: TabHubOptions): Promise<TabHub>
  /** Opens a tab; returns its id. */
  openTab(permissions?: TabPermissions): Promise<string>
  closeTab(tab: string): Promise<void>
  reopenTab(tab: string): Promise<void>
  /** Delivers a message: an idle tab starts a turn, a busy one queues it. */
  /**
   * `signal` cancels the turn this delivery started; an already-aborted one delivers nothing
   * and rejects (`AgentCoreError`, code `cancelled`). Queued and held messages are not affected.
   * An `agent` message to a tab already holding `maxHeldMessages` of them rejects with
   * `TabQueueFullError`.
   */
  deliver(tab: string, text: string, options?: { origin?: 'human' | 'agent'; signal?: AbortSignal }): Promise<Delivery>
  /** Resolves a handle or id prefix. */
  resolve(input: string):
    | { status: 'ok'; tab: string; handle: string }
    | { status: 'none'; openHandles: string[]; openCount: number }
    | { status: 'ambiguous'; matches: string[] }
    | { status: 'invalid'; [key: string]: unknown }
  handle(tab: string): string | null
  tabs(): TabHubTab[]
  tab(tab: string): TabHubTab | null
  setPermissions(tab: string, permissions: TabPermissions): Promise<void>
  /** What `read_tab` returns: the last answer and state. */
  read(tab: string): Promise<{ tabId: string; handle: string | null; state: string; lastResponse: string | null }>
  session(tab: string): Promise<Session>
  cancel(tab: string): Promise<void>
  waitIdle(tab: string): Promise<TabHubTab>
  waitAllIdle(): Promise<void>
  events(): AsyncGenerator<TabEvent, void, undefined>
  close(): void
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Codes of the errors agent-core throws. */
export type ErrorCode =
  | 'config'
  | 'invalid_argument'
  | 'invalid_state'
  | 'runtime'
  | 'tool_duplicate'
  | 'tool_invalid_schema'
  | 'tool_invalid'
  | 'session_not_found'
  | 'session_exists'
  | 'store'
  | 'closed'
  | 'cancelled'
  | 'mcp'
  | 'tab_not_found'
  | 'tab_closed'
  | 'tab_exists'
  | 'tab_queue_full'
  | (string & {})

/** Base class of every error thrown by agent-core. */
export declare class AgentCoreError extends Error {
  constructor(message: string, code: string, options?: ErrorOptions)
  readonly code: ErrorCode
}
/** A bad option or argument. */
export declare class ConfigError extends AgentCoreError {}
/** A tool could not be defined or registered. */
export declare class ToolDefinitionError extends AgentCoreError {}
/** The session does not exist. */
export declare class SessionNotFoundError extends AgentCoreError {}
/** A session with this id already exists. */
export declare class SessionExistsError extends AgentCoreError {}
/** The store failed. */
export declare class StoreError extends AgentCoreError {}
/** The agent was closed. */
export declare class ClosedError extends AgentCoreError {}
/** A clarification answer was refused (not pending, invalid, expired). */
export declare class ClarificationError extends AgentCoreError {}
/** A turn that did not end `done` (from `run.result()`); `code` is the error kind or status. */
export declare class RunError extends AgentCoreError {
  constructor(message: string, code: string, outcome: Outcome, options?: ErrorOptions)
  readonly outcome: Outcome
}
/** Thrown by a tool: the model sees the message and may retry. */
export declare class ToolError extends AgentCoreError {
  constructor(message: string, options?: { retryable?: boolean; cause?: unknown })
  readonly retryable: boolean
}
/** Thrown by a JS BrowserHost; `disconnected` ends the turn, `timeout` lets the model retry. */
export declare class HostError extends AgentCoreError {
  constructor(
    message: string,
    code?: 'disconnected' | 'timeout' | 'script' | 'navigation' | 'no_such_tab' | 'other',
    options?: ErrorOptions,
  )
}
/** The tab already holds `maxHeldMessages` messages from agents; this one was not queued (`tab_queue_full`). */
export declare class TabQueueFullError extends AgentCoreError {}
/** Thrown by a tool: ends the turn; the thrown object comes back as `outcome.cause`. */
export declare class FatalToolError extends AgentCoreError {
  constructor(message: string, options?: { cause?: unknown })
  readonly fatal: true
}
