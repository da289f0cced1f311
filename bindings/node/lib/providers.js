'use strict'
/**
 * Model providers: the scripted one (not a model) and the adapters of real model services.
 * @module agent-core/providers
 */
const native = require('../index.js')
const { wrap, ConfigError } = require('./errors.js')
const { toJsonValue } = require('./tools.js')

/**
 * A provider that replays a fixed script, one step per model call. **Not a language model**:
 * for tests, benchmarks and offline demos.
 */
class ScriptedProvider {
  /**
   * @param {any[]} steps `ScriptStepSpec`s of the options format (camelCase keys), or strings
   * @param {{ recordRequests?: boolean }} [options] keep every request for `requests()` (default true)
   */
  constructor(steps, options = {}) {
    if (!Array.isArray(steps)) throw new ConfigError('ScriptedProvider(steps): steps must be an array', 'invalid_argument')
    const data = toJsonValue(steps)
    /** @internal */
    this.native = wrap(() => native.NativeProvider.scripted(data, options.recordRequests !== false))
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
    const failure = (/** @type {string} */ message) => ({ error: { kind: 'bad_request', message } })
    p.native = wrap(() =>
      native.NativeProvider.scriptedFn((/** @type {any} */ request) => {
        try {
          const step = toJsonValue(choose(request))
          return step === undefined ? failure('the script function returned no step') : step
        } catch (e) {
          return failure(`the script function threw: ${e instanceof Error ? e.message : String(e)}`)
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
    return this.native.requests()
  }
}

/**
 * A real provider adapter: `options` are the `ProviderConfig` of the options format (camelCase
 * keys), read by the native module; `kind` comes from the class.
 * @param {string} kind
 * @param {any} options
 */
function connect(kind, options) {
  if (options === null || typeof options !== 'object') {
    throw new ConfigError(`${kind}: options must be an object with at least \`model\``, 'invalid_argument')
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
  /** @param {any} options `{ model, apiKey?, baseUrl?, http?, streaming?, maxInputTokens?, headers? }` */
  constructor(options) {
    super(connect('openai-compatible', options))
  }
}

/**
 * A provider speaking OpenAI's Responses API (`/v1/responses`), which the newest OpenAI models
 * need; `store: false`, with reasoning models' encrypted reasoning kept in the transcript.
 */
class OpenAIResponses extends NativeProvider {
  /** @param {any} options the options of `OpenAICompatible` */
  constructor(options) {
    super(connect('openai-responses', options))
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

module.exports = { ScriptedProvider, OpenAICompatible, OpenAIResponses, Anthropic, Gemini, FallbackRouter, providerFromEnv }
