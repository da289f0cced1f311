/**
 * Lifecycle hooks (`AgentOptions.hooks`): code the host runs at fixed points of every turn, to
 * edit what the model is sent (redaction), decide or rewrite a tool call, rewrite a tool's
 * result, or see how a turn ended.
 */
import type { ContentPart, Json, Message, Outcome, Usage } from './events.js'
import type { TurnOrigin } from './gate.js'
import type { ModelRequest } from './providers.js'

/** A model call's answer, as `afterModelCall` sees it. */
export interface ModelResponse {
  /** The assistant message (text, tool calls, reasoning). */
  message: Message
  usage: Usage | null
  /** Why generation stopped (`{ other }`: the provider's own word for it). */
  finishReason: 'stop' | 'tool_calls' | 'length' | 'content_filter' | { other: string }
  /** `[provider, model]` of the route that served the call, when a router reported it. */
  servedBy: [string, string] | null
}

/** A tool call as `beforeToolCall` and `afterToolCall` see it. */
export interface HookToolCall {
  sessionId: string
  /** The call's id, as the model gave it. */
  callId: string
  tool: string
  /** The arguments, checked against the tool's schema (after earlier hooks' rewrites). */
  arguments: Json
  /** Who started the turn. */
  origin: TurnOrigin
}

/** What `beforeToolCall` decides: allow (`undefined` or `true`), deny with a reason the model sees, or rewrite the arguments. */
export type ToolCallDecision = undefined | void | null | true | { deny: string } | { arguments: { [key: string]: Json } }

/** A tool's result as `afterToolCall` sees it (and may return, edited or new). */
export type HookToolResult =
  | { ok: true; content: ContentPart[]; structured?: Json; truncated?: boolean }
  | { ok: false; error: string; fatal?: boolean }

/** A value or a promise of it. */
type MaybePromise<T> = T | Promise<T>

/**
 * Code the host runs at fixed points of every turn (`new Agent({ hooks: [...] })`). Every method
 * is optional, sync or async; only the methods an object has are called. Hooks run in the order
 * of the array. A method that throws (or whose promise rejects) ends the turn with status
 * `error`, `errorKind: 'hook'` and the error `the host's <point> hook failed: <message>`.
 *
 * Values are copies: edit them and return them (or return new ones); returning `undefined` (or
 * `null`) keeps the original, whatever was changed in the copy.
 */
export interface AgentHooks {
  /**
   * Before each model call (the compaction summary's too), with the request as it will be
   * sent: return a replacement (for example with a secret redacted) or `undefined`.
   */
  beforeModelCall?(sessionId: string, request: ModelRequest): MaybePromise<ModelRequest | null | undefined | void>
  /** After each model call, before its message is stored and its tool calls run: return a replacement or `undefined`. */
  afterModelCall?(sessionId: string, response: ModelResponse): MaybePromise<ModelResponse | null | undefined | void>
  /**
   * Before each tool call whose arguments passed the schema, before the gate. A denial is a
   * failed result the model reads (`denied by the host: <reason>`) and the turn goes on;
   * rewritten arguments are checked against the schema again (refused ones fail the call).
   * Anything else returned is a hook failure.
   */
  beforeToolCall?(call: HookToolCall): MaybePromise<ToolCallDecision>
  /**
   * After each tool call that ran, before its result is capped, stored and shown to the model:
   * return a replacement or `undefined`. A timeout or a crash comes as `{ ok: false }`; a fatal
   * error stays fatal unless replaced.
   */
  afterToolCall?(call: HookToolCall, result: HookToolResult): MaybePromise<HookToolResult | null | undefined | void>
  /** Once a turn ended, whatever its outcome, before the outcome is returned. What it returns is ignored. */
  turnEnded?(sessionId: string, outcome: Outcome): MaybePromise<unknown>
}
