/** Options of `enableTracing`. */
export interface TracingOptions {
  /** The collector's base URL, such as `http://127.0.0.1:4318`; spans go to `{endpoint}/v1/traces`. */
  endpoint: string
  /** The `service.name` of the spans (default `agent-core`). */
  serviceName?: string
  /** How long one export request may take, in ms (default 10 000). */
  timeoutMs?: number
}

/** The running export of `enableTracing`. */
export interface Tracing {
  /** Sends the spans still buffered, keeping the export running. */
  flush(): Promise<void>
  /** Sends the spans still buffered and stops the export (a second call does nothing). */
  shutdown(): Promise<void>
  /** `await using tracing = enableTracing(...)` shuts it down at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Exports every agent's turns as OpenTelemetry GenAI spans (`invoke_agent`, `chat`,
 * `execute_tool`) to an OTLP/HTTP endpoint (protobuf POSTs). Once per process: a second call
 * throws an `AgentCoreError`, even after `shutdown()`. `AgentConfig.agentName` names an agent's
 * spans and `AgentConfig.traceContent` adds the messages to them.
 *
 * ```ts
 * const tracing = enableTracing({ endpoint: 'http://127.0.0.1:4318', serviceName: 'my-app' })
 * // ... run agents ...
 * await tracing.shutdown()
 * ```
 */
export declare function enableTracing(options: TracingOptions): Tracing
