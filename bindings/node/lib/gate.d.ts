/** The gate: who decides each call of a gated tool. */
import type { Json } from './events.js'

/**
 * Who started a turn: the person, or another tab's agent (through `send_to_tab`). A turn
 * another tab started does not carry the person's authority.
 */
export type TurnOrigin = { kind: 'person' } | { kind: 'tab'; tabId?: string; handle?: string }

/** A gated tool call waiting for consent. */
export interface GateRequest {
  sessionId: string
  callId: string
  tool: string
  arguments: Json
  /** Who started the turn that asks: a gate should say so, or refuse, for another tab. */
  origin: TurnOrigin
  /**
   * The host of the web page the call acts on (page tools: their tab's address as the browser
   * reports it, lowercased ASCII), when the tool names one. A call allowed here does not run if
   * its page has moved to another host by then.
   */
  host?: string
}

/**
 * The gate's answer: `true`/`'allow'` allows; `false`/`'deny'` denies; or an object with a
 * reason. `'ask'` (or `{ decision: 'ask', prompt }`) asks the person: unless a remembered
 * decision answers (see `Agent.approvalRules()`), the turn parks with outcome
 * `awaiting_approval` (persisted through the store) until `session.resolveApproval()` answers
 * it, in this process or after a restart. An MCP server (`serveMcp`) denies such calls: its
 * client cannot wait for the person.
 */
export type GateAnswer =
  | boolean
  | 'allow'
  | 'deny'
  | 'ask'
  | { allow: boolean; reason?: string }
  | { decision: 'allow' | 'deny'; reason?: string }
  | { decision: 'ask'; /** What to ask the person (shown with the call in `PendingApproval`). */ prompt?: string }

/** Decides each call of a gated tool, sync or async. A gate that throws denies the call. */
export type Gate = (request: GateRequest) => GateAnswer | Promise<GateAnswer>
