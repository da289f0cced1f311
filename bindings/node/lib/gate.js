'use strict'
/**
 * What an agent and an MCP server share: JS tools, tool sets and the gate on a native builder.
 * @module agent-core/gate
 */
const native = require('../index.js')
const { wrap, AgentCoreError, ConfigError, ToolDefinitionError } = require('./errors.js')
const { ToolSet, invoker, toJsonValue } = require('./tools.js')

/** The gate's view of who started a turn, without absent fields. */
function turnOrigin(origin) {
  if (!origin || origin.kind !== 'tab') return { kind: 'person' }
  const out = { kind: 'tab' }
  if (origin.tabId != null) out.tabId = origin.tabId
  if (origin.handle != null) out.handle = origin.handle
  return out
}

/**
 * The native reply to a gate's answer: allow, deny (with a reason), or ask the person (with a
 * prompt), which parks the turn until the approval is resolved.
 * @param {any} reply
 */
function gateReply(reply) {
  if (reply === true || reply === 'allow') return { allow: true }
  if (reply === 'ask') return { allow: false, ask: true }
  if (reply === false || reply === 'deny' || reply === undefined || reply === null) return { allow: false }
  if (typeof reply === 'object') {
    if (reply.decision === 'ask') {
      return { allow: false, ask: true, prompt: reply.prompt == null ? undefined : String(reply.prompt) }
    }
    const allow = reply.allow === true || reply.decision === 'allow'
    return { allow, reason: allow || reply.reason == null ? undefined : String(reply.reason) }
  }
  return {
    allow: false,
    reason: `the gate answered ${JSON.stringify(reply)}; expected a boolean, 'allow', 'deny', 'ask', {allow, reason} or {decision, reason, prompt}`,
  }
}

/** Values per call among `dispatch`'s arguments (`CALL_FIELDS` in src/dispatch.rs). */
const CALL_FIELDS = 5

/**
 * The native dispatcher that runs an agent's JS tools: it hands over every call queued since
 * the last wake-up at once, `CALL_FIELDS` arguments per call (tool index, arguments, session
 * id, call id, invocation); plain replies go back in the returned list, promised ones through
 * `reply` when they settle.
 * @param {Array<(input: any) => any>} invokers
 */
function toolDispatcher(invokers) {
  /** @type {any} */
  const dispatcher = new native.NativeToolDispatcher((/** @type {any[]} */ ...flat) => {
    const count = flat.length / CALL_FIELDS
    const replies = new Array(count)
    for (let i = 0, at = 0; i < count; i++, at += CALL_FIELDS) {
      const call = { args: flat[at + 1], sessionId: flat[at + 2], callId: flat[at + 3], invocation: flat[at + 4] }
      let reply
      try {
        reply = invokers[flat[at]](call)
      } catch (e) {
        // The invoker turns a tool's throw into a reply; this catches a fault of its own.
        reply = { kind: 'error', text: `the tool failed: ${e instanceof Error ? e.message : String(e)}` }
      }
      if (reply !== null && typeof reply === 'object' && typeof reply.then === 'function') {
        const invocation = call.invocation
        const fail = (/** @type {any} */ e) => dispatcher.reply(invocation, { kind: 'error', text: String(e?.message ?? e) })
        // A reply the native side cannot read fails the call instead of going unhandled.
        reply.then((/** @type {any} */ r) => dispatcher.reply(invocation, r), fail).catch(fail)
      } else {
        replies[i] = reply
      }
    }
    return replies
  })
  return dispatcher
}

/**
 * Adds tools (built-in tool sets and JS tools) and the gate to a native builder.
 * @param {any} b the NativeAgentBuilder
 * @param {any[]} tools
 * @param {any} gate
 * @param {Map<number, { abort(reason: unknown): void }>} controllers the running JS tools' controllers
 * @param {Map<number, unknown>} errors fatal JS tool errors, kept for outcomes
 * @param {() => number} nextId
 */
function addToolsAndGate(b, tools, gate, controllers, errors, nextId) {
  b.abortHook((invocation) => {
    const c = controllers.get(invocation)
    if (c) {
      controllers.delete(invocation)
      c.abort(new AgentCoreError('the tool call was cancelled', 'cancelled'))
    }
  })
  /** @type {Array<(input: any) => any>} the JS tools' invokers, by dispatcher index */
  const invokers = []
  /** @type {any} */
  let dispatcher
  for (const t of tools) {
    if (t instanceof ToolSet) {
      wrap(() => b.toolSet(t.native))
      continue
    }
    if (!t || t.kind !== 'agent-core.tool') {
      throw new ToolDefinitionError('every entry of `tools` must come from tool({...})', 'tool_invalid')
    }
    dispatcher ??= toolDispatcher(invokers)
    wrap(() =>
      b.tool(
        {
          name: t.name,
          description: t.description,
          parameters: toJsonValue(t.parameters),
          gated: t.gated,
          parallelSafe: t.parallelSafe,
          timeoutMs: t.timeoutMs,
        },
        dispatcher,
        invokers.length,
      ),
    )
    invokers.push(invoker(t, controllers, errors, nextId))
  }
  if (gate !== undefined) {
    if (typeof gate !== 'function') throw new ConfigError('`gate` must be a function', 'invalid_argument')
    b.gate((input) => {
      const request = {
        sessionId: input.sessionId,
        callId: input.callId,
        tool: input.tool,
        arguments: input.arguments,
        origin: turnOrigin(input.origin),
      }
      // Only when the tool names one, so requests of other tools keep their shape.
      if (input.host != null) request.host = input.host
      let answer
      try {
        answer = gate(request)
      } catch (e) {
        return { allow: false, reason: `the gate threw: ${e instanceof Error ? e.message : String(e)}` }
      }
      if (answer !== null && typeof answer === 'object' && typeof answer.then === 'function') {
        return Promise.resolve(answer).then(gateReply, (e) => ({
          allow: false,
          reason: `the gate threw: ${e instanceof Error ? e.message : String(e)}`,
        }))
      }
      return gateReply(answer)
    })
  }
}

module.exports = { addToolsAndGate, turnOrigin }
