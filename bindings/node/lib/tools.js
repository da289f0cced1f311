'use strict'
/**
 * Tools: JS tools (`tool({...})` and the wrapper the native module calls), and the built-in
 * tool sets (`ToolSet`, `fsTools`).
 * @module agent-core/tool
 */
const native = require('../index.js')
const { wrap, ToolDefinitionError } = require('./errors.js')

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** @param {any} s */
function isZod(s) {
  return s !== null && typeof s === 'object' && typeof s.safeParse === 'function'
}

/**
 * The JSON Schema of a zod schema (zod 4's `toJSONSchema`).
 * @param {any} schema
 * @param {string} name
 */
function zodToJsonSchema(schema, name) {
  let toJSONSchema = null
  if (schema._zod) {
    try {
      toJSONSchema = require('zod').toJSONSchema
    } catch {
      // zod is the user's: when it cannot be resolved from here, fall back to the schema's own method.
    }
  }
  if (typeof toJSONSchema !== 'function') {
    throw new ToolDefinitionError(
      `tool ${JSON.stringify(name)}: cannot derive a JSON Schema from this zod schema (zod >= 4 is needed); ` +
        'pass the JSON Schema as `parameters` and the zod schema as `schema`',
      'tool_invalid_schema',
    )
  }
  const json = toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })
  delete json.$schema
  return json
}

/**
 * Describes zod issues for the model: which argument and what is wrong.
 * @param {any} error
 */
function describeZodError(error) {
  const issues = Array.isArray(error?.issues) ? error.issues : []
  if (issues.length === 0) return `invalid arguments: ${String(error?.message ?? error)}`
  return (
    'invalid arguments: ' +
    issues
      .map((/** @type {any} */ i) => {
        const path = Array.isArray(i.path) && i.path.length > 0 ? i.path.join('.') : '(root)'
        return `${path}: ${i.message}`
      })
      .join('; ')
  )
}

/**
 * Defines a tool. Returns a frozen description the `Agent` constructor accepts in `tools`.
 * @param {any} definition
 */
function tool(definition) {
  if (definition === null || typeof definition !== 'object') {
    throw new ToolDefinitionError('tool(definition): definition must be an object', 'tool_invalid')
  }
  const { name, description = '', execute, gated = false, parallelSafe = false, timeoutMs } = definition
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ToolDefinitionError(
      `tool name ${JSON.stringify(name)} is invalid: use 1-64 letters, digits, '_' or '-'`,
      'tool_invalid',
    )
  }
  if (typeof execute !== 'function') {
    throw new ToolDefinitionError(`tool ${JSON.stringify(name)}: execute must be a function`, 'tool_invalid')
  }
  // The model reads the description: null is none, anything else but text is a mistake.
  if (description !== null && typeof description !== 'string') {
    throw new ToolDefinitionError(`tool ${JSON.stringify(name)}: description must be a string`, 'tool_invalid')
  }
  let { parameters, schema } = definition
  if (isZod(parameters)) {
    schema = parameters
    parameters = undefined
  }
  if (schema !== undefined && !isZod(schema)) {
    throw new ToolDefinitionError(`tool ${JSON.stringify(name)}: schema must be a zod schema`, 'tool_invalid')
  }
  if (parameters === undefined) {
    parameters = schema ? zodToJsonSchema(schema, name) : { type: 'object', properties: {} }
  }
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw new ToolDefinitionError(
      `tool ${JSON.stringify(name)}: parameters must be a JSON Schema object or a zod schema`,
      'tool_invalid_schema',
    )
  }
  return Object.freeze({
    kind: 'agent-core.tool',
    name,
    description: description ?? '',
    parameters,
    schema,
    gated: Boolean(gated),
    parallelSafe: Boolean(parallelSafe),
    timeoutMs,
    execute,
  })
}

/**
 * How deeply a tool's result may nest, as in the Python binding: the core's JSON parser reads
 * at most 128 levels, and a result sits a few levels inside the message that carries it.
 */
const MAX_DEPTH = 100

/**
 * `JSON.stringify`, except that a structure containing itself or nested deeper than
 * `MAX_DEPTH` levels is a TypeError saying so (checked while stringifying, so getters and
 * `toJSON` run once, and a very deep value never exhausts the stack).
 * @param {unknown} value
 */
function toJsonText(value) {
  /** @type {object[]} the containers from the root down to the one being written */
  const path = []
  return JSON.stringify(value, function (_key, v) {
    // `this` is the container holding `v`: drop the finished siblings' subtrees.
    while (path.length > 0 && path[path.length - 1] !== this) path.pop()
    if (v !== null && typeof v === 'object') {
      if (path.includes(v)) {
        throw new TypeError(`cannot convert a cyclic structure to JSON: ${Array.isArray(v) ? 'an array' : 'an object'} contains itself`)
      }
      if (path.length >= MAX_DEPTH) {
        throw new TypeError(`cannot convert to JSON: the value is nested deeper than ${MAX_DEPTH} levels`)
      }
      path.push(v)
    }
    return v
  })
}

/** Nodes `isPlainJson` looks at before leaving a value to `JSON.stringify` (a huge or cyclic value). */
const PLAIN_BUDGET = 100_000

/**
 * Whether `value` is already plain JSON data that the native module can read as it is:
 * strings, finite numbers, booleans, null, arrays without holes and objects with the plain
 * prototype (or none) and no `toJSON`, at most `MAX_DEPTH` levels and `PLAIN_BUDGET` nodes.
 * @param {unknown} value
 */
function isPlainJson(value) {
  let budget = PLAIN_BUDGET
  /** @param {unknown} v @param {number} depth @returns {boolean} */
  const plain = (v, depth) => {
    if (--budget < 0) return false
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return true
      case 'number':
        return Number.isFinite(v)
      case 'object': {
        if (v === null) return true
        if (depth >= MAX_DEPTH) return false
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) if (!plain(v[i], depth + 1)) return false
          return true
        }
        const proto = Object.getPrototypeOf(v)
        if ((proto !== Object.prototype && proto !== null) || typeof (/** @type {any} */ (v).toJSON) === 'function') return false
        for (const k in v) {
          if (!Object.hasOwn(v, k) || !plain(/** @type {any} */ (v)[k], depth + 1)) return false
        }
        return true
      }
      default:
        return false
    }
  }
  return plain(value, 0)
}

/**
 * `value` as plain JSON data for the native module, which reads it as an object (no JSON text
 * in between): the value itself when it already is plain data, otherwise what
 * `JSON.stringify` would write of it, read back (`toJSON` applied, `undefined` and functions
 * left out, `NaN` as null...). A structure containing itself or nested deeper than
 * `MAX_DEPTH` levels is a TypeError, as with `toJsonText`. `undefined` stays `undefined`.
 * @param {unknown} value
 * @returns {any}
 */
function toJsonValue(value) {
  if (isPlainJson(value)) return value
  const text = toJsonText(value)
  return text === undefined ? undefined : JSON.parse(text)
}

/**
 * What the native module receives back from a tool call: a text result as its string (read
 * in one conversion, see `ToolReply` in src/dispatch.rs), other results as a reply object. A
 * value that cannot become JSON is an error result for the model, naming the problem.
 * @param {unknown} value
 */
function okReply(value) {
  if (value === undefined || value === null) return 'ok'
  if (typeof value === 'string') return value
  try {
    // JSON text: the one value that does not cross as an object (see ToolReply in
    // src/dispatch.rs: text is the faster way from JS to Rust, and this is the hot path).
    return { kind: 'json', json: toJsonText(value) }
  } catch (e) {
    return { kind: 'error', text: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }
  }
}

/**
 * @param {unknown} error
 * @param {Map<number, unknown>} errors where fatal errors are kept until the outcome is read
 * @param {() => number} nextId
 */
function errorReply(error, errors, nextId) {
  const e = /** @type {any} */ (error)
  const message = e instanceof Error ? e.message : String(error)
  if (e !== null && typeof e === 'object' && e.fatal === true) {
    const id = nextId()
    errors.set(id, error)
    return { kind: 'fatal', text: message, errorId: id }
  }
  return { kind: 'error', text: message, retryable: Boolean(e?.retryable) }
}

/**
 * A call's abort controller whose `AbortController` is made only when the tool first reads
 * `context.signal`: making one costs more than everything else the invoker makes per call
 * (about 2.5 µs against 0.7 for the context and the map entry, in a loop of each), and most
 * tools never look. An abort before then is kept, so the signal is aborted when made.
 */
class LazyAbortController {
  /** @type {AbortController | undefined} */
  #controller
  /** @type {{ reason: unknown } | undefined} */
  #aborted

  /** The signal, made now if it was not yet. */
  get signal() {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#aborted !== undefined) this.#controller.abort(this.#aborted.reason)
    }
    return this.#controller.signal
  }

  /** @param {unknown} reason */
  abort(reason) {
    if (this.#controller !== undefined) this.#controller.abort(reason)
    else this.#aborted ??= { reason }
  }
}

/**
 * What a tool call receives as its context (`ToolContext` in tools.d.ts). A class, not an
 * object literal with a `signal` getter: V8 defines a literal's getter through a runtime call
 * on every call, and objects whose getters are different closures each get a map of their
 * own and fall back to dictionary properties (about 400 ns per call against 20, measured in a
 * loop of each).
 */
class ToolCallContext {
  #controller
  /**
   * @param {string} sessionId
   * @param {string} callId
   * @param {LazyAbortController} controller
   */
  constructor(sessionId, callId, controller) {
    this.sessionId = sessionId
    this.callId = callId
    this.#controller = controller
  }

  /** Aborted when the turn is cancelled, the call times out or the agent closes. */
  get signal() {
    return this.#controller.signal
  }
}

/**
 * The function the native module calls for each call of `t`.
 * @param {any} t the tool
 * @param {Map<number, { abort(reason: unknown): void }>} controllers running invocations
 * @param {Map<number, unknown>} errors fatal errors by id
 * @param {() => number} nextId
 */
function invoker(t, controllers, errors, nextId) {
  return (/** @type {any} */ input) => {
    let args = input.args
    if (t.schema) {
      const parsed = t.schema.safeParse(args)
      if (!parsed.success) return { kind: 'error', text: describeZodError(parsed.error) }
      args = parsed.data
    }
    const controller = new LazyAbortController()
    const invocation = input.invocation
    const context = new ToolCallContext(input.sessionId, input.callId, controller)
    let out
    try {
      out = t.execute(args, context)
    } catch (e) {
      return errorReply(e, errors, nextId)
    }
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') {
      // Only a call still running can be aborted: the native side's abort reaches the JS
      // thread after this synchronous part, never during it.
      controllers.set(invocation, controller)
      return Promise.resolve(out).then(
        (v) => {
          controllers.delete(invocation)
          return okReply(v)
        },
        (e) => {
          controllers.delete(invocation)
          return errorReply(e, errors, nextId)
        },
      )
    }
    return okReply(out)
  }
}

/** A group of built-in tools (added to an agent with `tools: [...]`). */
class ToolSet {
  /** @internal @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
    this.kind = 'agent-core.toolset'
  }
  /** The tools' specs. */
  get specs() {
    return this.native.specs()
  }
  /** The tools' names. */
  get names() {
    return this.specs.map((/** @type {any} */ s) => s.name)
  }
  /**
   * The same tools with `gated` set for the named ones.
   * @param {string[]} names
   * @param {boolean} gated
   */
  withGated(names, gated) {
    return new ToolSet(this.native.regated(names, gated))
  }
}

/**
 * fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec. Writes, deletes and the shell
 * are gated. Pass `root` to confine every path to a directory, or `unrestricted: true`.
 * `maxWriteBytes` caps one fs_write (default 10 MiB); `shellEnv: { inheritAll, passthrough, set }`
 * says what shell_exec's commands inherit (by default only a safe list of variables). The
 * options are the `FsPolicy` of the options format, read by the native module.
 * @param {import('./tools').FsToolsOptions} options
 */
function fsTools(options) {
  return new ToolSet(wrap(() => native.fsTools(options ?? {})))
}

module.exports = { tool, invoker, isZod, toJsonValue, toJsonText, ToolSet, fsTools }
