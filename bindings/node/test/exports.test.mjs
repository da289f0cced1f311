// Pins the package's public surface: every export name and, for each exported class, its base
// class, the names on its prototype chain (up to Object/Error) and its static methods. Written
// before lib/index.js was split by concept, so the split provably lost or renamed nothing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('../lib/index.js')

const EXPORTS = [
  'Agent', 'AgentCoreError', 'Anthropic', 'ApprovalError', 'ClarificationError', 'ClosedError', 'ConfigError',
  'FallbackRouter', 'FatalToolError', 'Gemini', 'HostError', 'KeyStore', 'McpClient', 'McpServer',
  'MemoryStore', 'OpenAICompatible', 'OpenAIResponses', 'PostgresStore', 'Run', 'RunError', 'ScriptedProvider', 'Session',
  'SessionExistsError', 'SessionNotFoundError', 'SqliteStore', 'StoreError', 'TabHub',
  'TabQueueFullError', 'ToolDefinitionError', 'ToolError', 'ToolSet', 'agentTool', 'browserPrompt', 'enableTracing', 'fsTools', 'newBearerToken',
  'pageTools', 'providerFromEnv', 'serveMcp', 'tool',
]

const CLASSES = {
  Agent: { extends: null, members: ["Symbol(nodejs.dispose)", "_event", "_outcome", "approvalRules", "close", "closed", "createSession", "openSession", "revokeApprovalRule", "takesImages", "toolNames"], statics: [] },
  AgentCoreError: { extends: "Error", members: [], statics: [] },
  Anthropic: { extends: "NativeProvider", members: ["id", "model"], statics: [] },
  ApprovalError: { extends: "AgentCoreError", members: [], statics: [] },
  ClarificationError: { extends: "AgentCoreError", members: [], statics: [] },
  ClosedError: { extends: "AgentCoreError", members: [], statics: [] },
  ConfigError: { extends: "AgentCoreError", members: [], statics: [] },
  FallbackRouter: { extends: "NativeProvider", members: ["id", "model"], statics: [] },
  FatalToolError: { extends: "AgentCoreError", members: [], statics: [] },
  Gemini: { extends: "NativeProvider", members: ["id", "model"], statics: [] },
  HostError: { extends: "AgentCoreError", members: [], statics: [] },
  KeyStore: { extends: null, members: ["clearKey", "getKey", "providers", "setKey", "status"], statics: ["create"] },
  McpClient: { extends: null, members: ["Symbol(nodejs.asyncDispose)", "alias", "close", "isConnected", "refreshTools", "serverInfo", "toolNames", "tools"], statics: ["connect"] },
  McpServer: { extends: null, members: ["Symbol(nodejs.asyncDispose)", "shutdown"], statics: [] },
  MemoryStore: { extends: null, members: ["sessionIds"], statics: [] },
  OpenAICompatible: { extends: "NativeProvider", members: ["id", "model"], statics: [] },
  OpenAIResponses: { extends: "NativeProvider", members: ["id", "model"], statics: [] },
  PostgresStore: { extends: null, members: ["sessionIds"], statics: ["connect"] },
  Run: { extends: null, members: ["cancel", "events", "finished", "id", "outcome", "result", "sessionId", "status", "toJSON"], statics: [] },
  RunError: { extends: "AgentCoreError", members: [], statics: [] },
  ScriptedProvider: { extends: null, members: ["callCount", "id", "requests"], statics: ["fromFn"] },
  Session: { extends: null, members: ["answerClarification", "costUsd", "dismissApproval", "dismissClarification", "id", "messages", "modelHistory", "pendingApproval", "pendingClarification", "resolveApproval", "send", "sendTyped", "toJSON"], statics: [] },
  SessionExistsError: { extends: "AgentCoreError", members: [], statics: [] },
  SessionNotFoundError: { extends: "AgentCoreError", members: [], statics: [] },
  SqliteStore: { extends: null, members: ["sessionIds"], statics: ["open"] },
  StoreError: { extends: "AgentCoreError", members: [], statics: [] },
  TabHub: { extends: null, members: ["adoptHostTab", "answerClarification", "cancel", "close", "closeTab", "deliver", "dismissApproval", "dismissClarification", "events", "handle", "hostTab", "hostTabClosed", "hostTabs", "openTab", "openTabForHost", "read", "reopenTab", "resolve", "resolveApproval", "session", "setPermissions", "tab", "tabForHost", "tabs", "waitAllIdle", "waitIdle", "wireHostTab"], statics: ["create"] },
  TabQueueFullError: { extends: "AgentCoreError", members: [], statics: [] },
  ToolDefinitionError: { extends: "AgentCoreError", members: [], statics: [] },
  ToolError: { extends: "AgentCoreError", members: [], statics: [] },
  ToolSet: { extends: null, members: ["names", "specs", "withGated"], statics: [] },
}

/** Error codes the native module reports, and the class each becomes. */
const CODES = {
  config: 'ConfigError', invalid_argument: 'ConfigError', invalid_state: 'ConfigError', runtime: 'ConfigError',
  tool_duplicate: 'ToolDefinitionError', tool_invalid_schema: 'ToolDefinitionError', tool_invalid: 'ToolDefinitionError',
  session_not_found: 'SessionNotFoundError', session_exists: 'SessionExistsError',
  store: 'StoreError', encryption_unavailable: 'StoreError', crypt: 'StoreError', closed: 'ClosedError',
  clarification_not_pending: 'ClarificationError', clarification_invalid_answer: 'ClarificationError',
  clarification_expired: 'ClarificationError', tab_queue_full: 'TabQueueFullError',
  approval_not_pending: 'ApprovalError', approval_expired: 'ApprovalError', approval_missing_decision: 'ApprovalError',
  approval_unknown_call: 'ApprovalError', approval_invalid_arguments: 'ApprovalError', approval_invalid_remember: 'ApprovalError',
  cancelled: 'AgentCoreError', mcp: 'AgentCoreError',
}

const isClass = (/** @type {unknown} */ v) => typeof v === 'function' && /^class\b/.test(Function.prototype.toString.call(v))

/** @param {any} cls */
function shape(cls) {
  const members = new Set()
  for (let p = cls.prototype; p && p !== Object.prototype && p !== Error.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Reflect.ownKeys(p)) if (k !== 'constructor') members.add(String(k))
  }
  return {
    extends: Object.getPrototypeOf(cls).name || null,
    members: [...members].sort(),
    statics: Object.getOwnPropertyNames(cls).filter((k) => !['length', 'name', 'prototype'].includes(k)).sort(),
  }
}

test('the export names are pinned', () => {
  assert.deepEqual(Object.keys(api).sort(), [...EXPORTS].sort())
})

test('every exported class keeps its base, members and statics', () => {
  const classes = Object.keys(api).filter((n) => isClass(api[n])).sort()
  assert.deepEqual(classes, Object.keys(CLASSES).sort())
  for (const name of classes) assert.deepEqual(shape(api[name]), CLASSES[name], name)
})

test('the functions stay functions', () => {
  for (const name of EXPORTS.filter((n) => !(n in CLASSES))) assert.equal(typeof api[name], 'function', name)
})

test('native error codes keep their classes', () => {
  const { translate } = require('../lib/errors.js')
  for (const [code, cls] of Object.entries(CODES)) {
    const e = translate(new Error(`[${code}] boom`))
    assert.equal(e.constructor.name, cls, code)
    assert.ok(e instanceof api[cls], code)
    assert.equal(e.code, code)
  }
})

test('an ES module import sees every export by name', async () => {
  const esm = await import('../lib/index.js')
  assert.deepEqual(Object.keys(esm).filter((n) => n !== 'default' && n !== 'module.exports').sort(), [...EXPORTS].sort())
})
