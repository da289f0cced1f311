'use strict'
/**
 * agent-core for Node.js: agents, sessions and runs of the Rust agent-core runtime, with tools,
 * the consent gate and event observers written in JavaScript. Each concept lives in its own
 * module; this one only gathers the public API.
 *
 * ```js
 * const { Agent, ScriptedProvider, tool } = require('agent-core')
 * ```
 * @module agent-core
 */
const { Agent, agentTool } = require('./agent.js')
const { Session } = require('./session.js')
const { Run } = require('./run.js')
const { ScriptedProvider, OpenAICompatible, OpenAIResponses, Anthropic, Gemini, FallbackRouter, providerFromEnv } = require('./providers.js')
const { MemoryStore, SqliteStore, PostgresStore, KeyStore } = require('./stores.js')
const { TabHub } = require('./tabs.js')
const { ToolSet, tool, fsTools } = require('./tools.js')
const { pageTools, browserPrompt } = require('./hosts.js')
const { McpClient, McpServer, serveMcp, newBearerToken } = require('./mcp.js')
const { enableTracing } = require('./tracing.js')
const {
  AgentCoreError,
  ConfigError,
  ToolDefinitionError,
  SessionNotFoundError,
  SessionExistsError,
  StoreError,
  ClosedError,
  ClarificationError,
  ApprovalError,
  RunError,
  ToolError,
  FatalToolError,
  HostError,
  TabQueueFullError,
} = require('./errors.js')

// Shorthand names only: Node finds the named exports an ES module import sees by reading this
// object literal, and stops at the first `key: value` it cannot follow.

module.exports = {
  Agent,
  agentTool,
  Session,
  Run,
  ScriptedProvider,
  OpenAICompatible,
  Anthropic,
  OpenAIResponses,
  Gemini,
  FallbackRouter,
  providerFromEnv,
  MemoryStore,
  SqliteStore,
  PostgresStore,
  KeyStore,
  TabHub,
  ToolSet,
  tool,
  fsTools,
  pageTools,
  browserPrompt,
  McpClient,
  McpServer,
  serveMcp,
  newBearerToken,
  enableTracing,
  AgentCoreError,
  ConfigError,
  ToolDefinitionError,
  SessionNotFoundError,
  SessionExistsError,
  StoreError,
  ClosedError,
  ClarificationError,
  ApprovalError,
  RunError,
  ToolError,
  FatalToolError,
  HostError,
  TabQueueFullError,
}
