/** Model providers: the scripted one (not a model) and the adapters of real model services. */
import type { Json, JsonSchema, Message, Usage } from './events.js'

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
