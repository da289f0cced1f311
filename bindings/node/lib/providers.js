'use strict'
/**
 * Model providers: the scripted one (not a model) and the adapters of real model services.
 * @module agent-core/providers
 */
const native = require('../index.js')
const { wrap, ConfigError } = require('./errors.js')

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

module.exports = { ScriptedProvider, OpenAICompatible, Anthropic, Gemini, FallbackRouter, providerFromEnv }
