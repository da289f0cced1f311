/** The agent: a provider, tools, an optional store and gate, and the loop's limits. */
import type { ApprovalRule } from './approvals.js'
import type { AgentEvent } from './events.js'
import type { Gate } from './gate.js'
import type { AgentHooks } from './hooks.js'
import type { Provider } from './providers.js'
import type { Session } from './session.js'
import type { Store } from './stores.js'
import type { Tool, ToolSet } from './tools.js'

/**
 * The loop's limits: the `AgentConfig` of the options format (api/options.json), in camelCase.
 * Every key has a default (`undefined` and `null` keep it, except `maxToolCalls: null`: no cap);
 * an unknown key is refused with a `ConfigError` naming it. Durations are milliseconds (`...Ms`).
 */
export interface AgentConfig {
  /** Model calls per turn before the turn ends `capped` (default 100). */
  maxIterations?: number
  /**
   * Tool calls per turn before the turn ends `capped` with its own message. `undefined` keeps
   * the default, 12 (a model stuck retrying a page stops within a few steps); `null` means no
   * cap (unlike the other keys, where `null` keeps the default).
   */
  maxToolCalls?: number | null
  /**
   * The same tool called with the same arguments and getting the same result (or failing) this
   * many times in a row gets a note telling the model it is stuck; one more such call ends the
   * turn `capped` with its own message (default 3; 0 turns the guard off).
   */
  maxRepeatedCalls?: number
  /** The whole model call, stream included, in ms (default 180 000). */
  modelTimeoutMs?: number
  /** A tool call, in ms, unless the tool sets its own (default 60 000). */
  toolTimeoutMs?: number
  /** Parallel-safe tools running at once (default 3). */
  maxParallelTools?: number
  /** Characters of a tool result sent to the model (default 20 000); longer results are cut and flagged. */
  resultCapChars?: number
  /** What a gate denial does: end the turn `denied` (default) or tell the model and go on. */
  onDenial?: 'end_turn' | 'tell_model'
  /** Events buffered per run for slow iterators (default 1024). */
  eventBuffer?: number
  /** Upper bound on generated tokens per model call. */
  maxOutputTokens?: number | null
  /** Sampling temperature. */
  temperature?: number | null
  /** How long a clarification question waits for an answer, in ms (default 1 800 000). */
  clarificationTtlMs?: number
  /**
   * How long a turn parked for approval (a gate's `'ask'`) waits for the person, in ms
   * (default 1 800 000); then its calls do not run, the model is told, and `approval_expired`
   * is emitted.
   */
  approvalTtlMs?: number
  /** When and how older turns are compacted to fit the model's context window. */
  compaction?: CompactionConfig
  /** Limits of the write-time JSON compression of tool results. */
  compression?: CompressionConfig
  /**
   * Whether the model is sent images (screenshots, images in tool results and messages):
   * `'auto'` (default) as the provider knows its model (a model it does not know is sent none),
   * `'on'`, or `'off'` (page_screenshot is not offered and every image becomes a short note).
   */
  vision?: 'auto' | 'on' | 'off'
  /** Images sent per model call, the newest ones (default 3); older ones become a note. */
  maxImages?: number
  /**
   * Whether the pieces of a tool call's arguments are `tool_call_arguments_delta` events as the
   * model streams them, so a UI can show the call forming (default false).
   */
  streamToolArguments?: boolean
  /**
   * The agent's name in traces: `invoke_agent {name}` spans and `gen_ai.agent.name` (default
   * none: the span is named `invoke_agent`). See `enableTracing`.
   */
  agentName?: string | null
  /**
   * Whether traces carry what was said: messages and system prompt on `chat` spans, tool
   * arguments and results on `execute_tool` spans (default false).
   */
  traceContent?: boolean
  /**
   * US dollars a turn may spend (its model calls and its sub-agents'); before a model call
   * that could pass it, the turn ends `capped` with its own message (default none). See
   * docs/cost.md.
   */
  maxRunCostUsd?: number | null
  /** US dollars a session may spend over its turns in this process, checked the same way (default none). */
  maxSessionCostUsd?: number | null
  /**
   * Prices by model name that replace or add to the built-in table (default none: the
   * built-in table alone). Model names are kept as written.
   */
  prices?: Record<string, ModelPrice>
}

/** One model's prices in US dollars per million tokens (`AgentConfig.prices`). */
export interface ModelPrice {
  /** Input tokens neither read from nor written to the cache. */
  input: number
  /** Input tokens read from the provider's cache (default: the input price). */
  cachedInput?: number | null
  /** Input tokens written to the provider's cache, as Anthropic bills them (default: the input price). */
  cacheWrite?: number | null
  /** Generated tokens. */
  output: number
  /**
   * Reasoning tokens, for a provider that bills them apart from other output; they are
   * counted within the output tokens and billed at this price instead (default: the output price).
   */
  reasoning?: number | null
}

/** When and how older turns are compacted (`AgentConfig.compaction`). */
export interface CompactionConfig {
  /** Whether to compact at all (default true). */
  enabled?: boolean
  /** Compact when the estimated input exceeds `ratio × maxInputTokens` (default 0.7). */
  ratio?: number
  /** The model's input window in tokens (default: ask the provider). */
  maxInputTokens?: number | null
  /** Characters per token of the uncalibrated estimate (default 4). */
  charsPerToken?: number
  /** Tries at summarising before falling back to the trim (default 3). */
  maxAttempts?: number
  /** Output tokens requested for the summary (default 1024). */
  summaryMaxTokens?: number
}

/** Limits of the write-time JSON compression of tool results (`AgentConfig.compression`). */
export interface CompressionConfig {
  /** Strings with more characters than this are shortened (default 500). */
  maxValueChars?: number
  /** Characters kept at the start of a shortened string (default 100). */
  headChars?: number
  /** Characters kept at the end of a shortened string (default 50). */
  tailChars?: number
  /** Arrays with more items than this are shortened (default 5). */
  maxArrayItems?: number
  /** How many items a shortened array keeps (default 3). */
  keepArrayItems?: number
  /** Values nested deeper than this become `"[deep nested]"` (default 5). */
  maxDepth?: number
}

/** Everything an agent is made of. Only `provider` is required. */
export interface AgentOptions {
  provider: Provider
  tools?: (Tool<any> | ToolSet)[]
  /** Decides gated calls. Without one, gated calls are denied and never run. */
  gate?: Gate
  /** Where sessions are persisted (default: memory of this agent only). */
  store?: Store
  /** The system prompt; `null` or absent for none. Anything but a string is a `ConfigError`. */
  systemPrompt?: string | null
  config?: AgentConfig
  /** Offers the model the built-in `ask_clarification` tool (default false). */
  clarification?: boolean
  /**
   * Sees every event of every run, in order. Keep it fast: events wait for it in a queue of
   * `eventBuffer` (1 024) at most, and while the JS thread is busy, streamed tokens are dropped
   * first, then the oldest events (a process warning says how many).
   */
  onEvent?: (event: AgentEvent) => void
  /**
   * Lifecycle hooks, run in this order at their points of every turn (see `AgentHooks`). An
   * agent without hooks pays nothing for them.
   */
  hooks?: AgentHooks[]
}

/** An LLM agent: a provider, tools, an optional store and gate, and the loop's limits. */
export declare class Agent {
  constructor(options: AgentOptions)
  /** Creates a session, with a random UUID unless `id` is given. */
  createSession(options?: { id?: string }): Promise<Session>
  /** Opens an existing session: one this agent has open, or one in its store. */
  openSession(id: string): Promise<Session>
  /**
   * The remembered approval decisions (`remember` in `session.resolveApproval`), oldest first:
   * in the store when the agent has one (shared by every agent on it, kept across restarts), in
   * memory otherwise.
   */
  approvalRules(): Promise<ApprovalRule[]>
  /** Forgets remembered decision `id` (the person is asked again); whether there was one. */
  revokeApprovalRule(id: string): Promise<boolean>
  /** The names of the agent's tools. */
  readonly toolNames: string[]
  /**
   * Whether the model is sent images: `config.vision`, with `'auto'` resolved by what the
   * provider knows of its model. When false, image tools (page_screenshot) are not offered.
   */
  readonly takesImages: boolean
  /** Whether `close()` was called. */
  readonly closed: boolean
  /** Cancels running turns and refuses new ones. */
  close(): void
  [Symbol.dispose](): void
}

/** Options of `agentTool`. */
export interface AgentToolOptions {
  /**
   * How many levels of sub-agents may run below the first agent (default 3): a call that would
   * go deeper is refused with a message the model reads.
   */
  maxDepth?: number | null
  /**
   * Types the sub-agent's answers: a zod schema or a JSON Schema (as `session.sendTyped` takes).
   * Its turns are typed turns and a call answers with the checked answer as JSON.
   */
  output?: unknown
}

/**
 * Offers `agent` to another agent as the tool `name`, taking `{ task: string }`: each call runs
 * one turn of `agent` in a new session and answers with its final text. It acts for whoever
 * started the calling turn, stops when that turn is cancelled, and what it spent is in the
 * calling turn's `usage` and, per tool, in `outcome.subAgents`. Pass the result in `tools`.
 */
export declare function agentTool(name: string, description: string, agent: Agent, options?: AgentToolOptions): ToolSet
