/** Tools: JS tools defined with `tool({...})` and the built-in tool sets. */
import type { JsonSchema } from './events.js'

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
  description?: string | null
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

/**
 * Options of the filesystem and shell tools: the `FsPolicy` of the options format, in camelCase.
 * Exactly one of `root` or `unrestricted: true`; an unknown key is refused with a `ConfigError`.
 */
export interface FsToolsOptions {
  /** Confine every path to this directory (relative paths only, no `..`, no symlinks). */
  root?: string | null
  /** No confinement at all: must be chosen explicitly when `root` is absent. */
  unrestricted?: boolean
  /** Cap on the text `fs_read` returns, in bytes (default 65 536). */
  maxReadBytes?: number
  /** Cap on the entries `fs_list` returns (default 500). */
  maxListEntries?: number
  /** Cap on each of shell_exec's stdout and stderr, in bytes (default 32 768). */
  maxShellOutputBytes?: number
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
