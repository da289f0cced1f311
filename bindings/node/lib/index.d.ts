/**
 * agent-core for Node.js: the hand-written types of the public API.
 *
 * ```ts
 * import { Agent, ScriptedProvider, tool, type AgentEvent } from 'agent-core'
 * ```
 * @packageDocumentation
 */

// One declaration file per module of the JavaScript layer, checked against it by
// test/declarations.test.mjs; this file only gathers them.
export * from './events.js'
export * from './gate.js'
export * from './approvals.js'
export * from './hooks.js'
export * from './providers.js'
export * from './stores.js'
export * from './tools.js'
export * from './hosts.js'
export * from './mcp.js'
export * from './tracing.js'
export * from './agent.js'
export * from './session.js'
export * from './run.js'
export * from './tabs.js'
export * from './tab_wiring.js'
export * from './errors.js'
