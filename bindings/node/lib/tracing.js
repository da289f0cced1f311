'use strict'
/**
 * OpenTelemetry traces of the agent's turns, exported over OTLP/HTTP (the Rust agent-otel).
 * @module agent-core/tracing
 */
const native = require('../index.js')
const { wrap, ConfigError } = require('./errors.js')

/** The running export of `enableTracing`; `shutdown()` sends what is still buffered. */
class Tracing {
  /** @internal @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
  }
  /** Sends the spans still buffered, keeping the export running. */
  flush() {
    return wrap(() => this.native.flush())
  }
  /** Sends the spans still buffered and stops the export (a second call does nothing). */
  shutdown() {
    return wrap(() => this.native.shutdown())
  }
}

if (typeof Symbol.asyncDispose === 'symbol') {
  Object.defineProperty(Tracing.prototype, Symbol.asyncDispose, {
    value: function asyncDispose() {
      return this.shutdown()
    },
  })
}

/**
 * Exports every agent's turns as OpenTelemetry GenAI spans (`invoke_agent`, `chat`,
 * `execute_tool`) to an OTLP/HTTP endpoint, as protobuf POSTs to `{endpoint}/v1/traces`. Once
 * per process: a second call throws, even after `shutdown()`.
 * @param {{ endpoint: string, serviceName?: string, timeoutMs?: number }} options
 */
function enableTracing(options) {
  if (!options || typeof options !== 'object' || typeof options.endpoint !== 'string') {
    throw new ConfigError('enableTracing(options): `endpoint` (a string) is required', 'invalid_argument')
  }
  const { endpoint, serviceName, timeoutMs } = options
  return new Tracing(wrap(() => native.enableTracing({ endpoint, serviceName, timeoutMs })))
}

module.exports = { enableTracing }
