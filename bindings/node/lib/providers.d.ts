/** Model providers: the scripted one (not a model) and the adapters of real model services. */
import type { Json, JsonSchema, Message } from './events.js'

/**
 * What a `ScriptedProvider` does for one model call: the `ScriptStepSpec` of the options format,
 * in camelCase. Its shape says what it does:
 * - `{ text, reasoning, toolCalls, usage }` streams a reply (every key optional);
 * - the same with `error` streams the reply's text and then fails (at once without text,
 *   reasoning or tool calls);
 * - `{ delayMs, then }` waits (cancellably), then does `then`;
 * - `{ hang: text }` streams the text and never finishes (until cancelled).
 *
 * A bare string is a text reply. Unknown keys are refused with a `ConfigError`.
 */
export interface ScriptStepSpec {
  /** Answer text, streamed word by word. */
  text?: string | null
  /** Reasoning text, streamed before the answer. */
  reasoning?: string | null
  /** Tool calls to make. */
  toolCalls?: ScriptedCallSpec[]
  /** Usage to report (an estimate when absent). */
  usage?: ScriptedUsage | null
  /** Fail the call with this error (after streaming the text, when there is some). */
  error?: ScriptedErrorSpec | null
  /** Wait this long, in ms, before doing `then`. */
  delayMs?: number | null
  /** The step a `delayMs` step does after its wait. */
  then?: ScriptStep | null
  /** Stream this text, then never finish (until the call is cancelled). */
  hang?: string | null
}

/** One step of a `ScriptedProvider`: a text reply, or a `ScriptStepSpec`. */
export type ScriptStep = string | ScriptStepSpec

/** One tool call of a scripted reply. */
export interface ScriptedCallSpec {
  /** The tool's name. */
  name: string
  /** The arguments: a JSON value, or a string sent verbatim (absent: `{}`). */
  arguments?: Json
}

/** The error a scripted step fails with. */
export interface ScriptedErrorSpec {
  /** The kind of failure (default `server`). */
  kind?:
    | 'rate_limited'
    | 'timeout'
    | 'transport'
    | 'server'
    | 'auth'
    | 'bad_request'
    | 'context_overflow'
    | 'malformed'
    | 'config'
    | 'cancelled'
  /** The provider's message. */
  message?: string | null
  /** HTTP status, for `server` (default 500) and `auth` (default 401). */
  status?: number | null
  /** For `rate_limited`: the `Retry-After` the server sent, in ms. */
  retryAfterMs?: number | null
}

/** The usage a scripted step reports. */
export interface ScriptedUsage {
  inputTokens: number
  outputTokens: number
  cachedInputTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

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

/**
 * How to reach a real model service: the `ProviderConfig` of the options format in camelCase,
 * without `kind` (the class says it). Unknown keys are refused with a `ConfigError`.
 */
export interface ProviderOptions {
  /** The model name sent to the provider. */
  model: string
  /** The API key (omit or leave empty for local servers that need none). */
  apiKey?: string
  /** Overrides the default base URL (for example `http://127.0.0.1:8080/v1`); Gemini ignores it. */
  baseUrl?: string | null
  /** Timeouts, retries and caps of the HTTP calls. */
  http?: HttpConfig
  /** Stream over SSE (default true). */
  streaming?: boolean
  /** The model's context window in tokens, when known (used by compaction). */
  maxInputTokens?: number | null
  /** Extra request headers. */
  headers?: Record<string, string>
  /**
   * Anthropic prompt caching: `'auto'` (default; breakpoints on the last tool, the system
   * prompt and the newest messages), `'static'` (tools and system prompt only) or `'off'`.
   * The other providers ignore it.
   */
  promptCache?: 'auto' | 'static' | 'off'
  /**
   * OpenAI Responses: the reasoning summaries asked of reasoning models (default `auto`);
   * `off` for an organization OpenAI has not verified, which it refuses summaries to. The
   * other providers ignore it.
   */
  reasoningSummary?: 'auto' | 'concise' | 'detailed' | 'off'
}

/** Timeouts, retries and caps of a provider's HTTP calls (`ProviderOptions.http`). */
export interface HttpConfig {
  /** Establishing the TCP/TLS connection, in ms (default 30 000). */
  connectTimeoutMs?: number
  /** Waiting for the response headers, and for a whole non-streamed body, in ms (default 60 000). */
  readTimeoutMs?: number
  /** The longest silence between two chunks of a streamed body, in ms (default 120 000). */
  idleTimeoutMs?: number
  /** The whole model call, retries and stream included, in ms (default 180 000). */
  callTimeoutMs?: number
  /** Attempts per call, the first included (default 3): retries on 429, 5xx, timeouts and transport errors before any byte of the answer. */
  maxAttempts?: number
  /** The first backoff delay, in ms; each retry doubles it, with full jitter (default 500). */
  backoffBaseMs?: number
  /** The largest backoff delay, in ms (default 8000). */
  backoffMaxMs?: number
  /** The longest `Retry-After` honoured, in ms (default 60 000); a server asking for more fails the call at once. */
  maxRetryAfterMs?: number
  /** An HTTP(S) proxy URL for every request (`HTTP_PROXY` and `HTTPS_PROXY` are not read). */
  proxy?: string | null
  /** Sent as `User-Agent`. */
  userAgent?: string
  /** The most bytes of one response body, streamed or not; past it the call fails as malformed (default 64 MiB). */
  maxResponseBytes?: number
  /** The most bytes of an error body read (default 64 KiB). */
  maxErrorBodyBytes?: number
  /** The most bytes of one tool call's arguments; past it the call fails as malformed (default 1 MiB). */
  maxToolArgsBytes?: number
  /** The most tool calls in one response; past it the call fails as malformed (default 128). */
  maxToolCalls?: number
}

/** OpenAI Chat Completions and every server that copies it (OpenRouter, vLLM, llama.cpp, ...). */
export declare class OpenAICompatible implements Provider {
  constructor(options: ProviderOptions)
  readonly id: string
  readonly model: string
}
/**
 * OpenAI's Responses API (`/v1/responses`), which the newest OpenAI models need. Requests are
 * sent with `store: false`; reasoning models' encrypted reasoning is kept in the transcript and
 * sent back, so multi-turn reasoning needs no state on OpenAI's side.
 */
export declare class OpenAIResponses implements Provider {
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
