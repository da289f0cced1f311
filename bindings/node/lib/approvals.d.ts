/** Durable approvals: turns parked by a gate's `'ask'` until the person answers. */
import type { Json } from './events.js'
import type { TurnOrigin } from './gate.js'

/** One gated call waiting for the person's answer. */
export interface ApprovalCall {
  /** The call's id: the key of its decision in `resolveApproval`. */
  callId: string
  /** The tool's name. */
  tool: string
  /** The validated arguments the call would run with. */
  arguments: Json
  /** What the gate asked the person (`{ decision: 'ask', prompt }`), when it said. */
  prompt?: string
  /**
   * The host of the web page the call acts on, for a tool that names one (the page tools):
   * approved, the call runs only while its page is still on this host; a `{ host }` pattern
   * to remember must match it.
   */
  host?: string
  /**
   * The sub-agents (`agentTool`) the call waits in, outermost first, when a sub-agent's turn
   * asked for it; absent for the session's own calls. Its `callId` is then the calling call's
   * id and the sub-agent's own, joined by `/`: answer it like any other call.
   */
  via?: SubAgentStep[]
}

/** One sub-agent between a session and a call waiting for approval in the sub-agent's turn. */
export interface SubAgentStep {
  /** The name of the tool the sub-agent is offered as. */
  tool: string
  /** The id of the call of that tool that started the sub-agent's turn. */
  callId: string
  /** The sub-agent's session, parked on the approval. */
  sessionId: string
  /** The sub-agent's own pending approval. */
  approvalId: string
}

/**
 * A turn parked until the person approves or rejects a gated call (outcome
 * `awaiting_approval`). Persisted through the store: a reopened session still has it.
 */
export interface PendingApproval {
  /** The approval's id (answer with it). */
  id: string
  /** The calls waiting for an answer. */
  calls: ApprovalCall[]
  /** The model's text in the message that made the calls, if it wrote any. */
  message?: string
  /** Who started the turn: the person, or another tab's agent. */
  origin: TurnOrigin
  /** When the turn parked (ms since the epoch). */
  askedAtMs: number
  /** When the approval expires unanswered (ms since the epoch; `approvalTtlMs` after `askedAtMs`). */
  expiresAtMs: number
}

/**
 * How far a remembered decision holds: `'session'` (calls of the tool in this session),
 * `'always'` (in every session of the store, or of the agent without a store), or
 * `{ host: pattern }`: calls of the tool, in every session, on pages whose host matches
 * `'example.com'` (that host) or `'*.example.com'` (its subdomains, not `example.com` itself),
 * compared in ASCII lowercase (an internationalised name in its punycode form, `xn--…`). Only
 * for a call whose tool names its page's host (the page tools) and that the pattern matches;
 * a call without a host is never answered by such a rule.
 */
export type RememberScope = 'session' | 'always' | { host: string }

/**
 * The person's answer to one call. `'approve'` runs it as the model made it; `arguments` runs
 * it with edited arguments instead (checked against the tool's schema again). `'reject'` does
 * not run it: the model reads that it was rejected, with `reason`, and the turn goes on.
 * `remember` answers later calls of the tool the same way without asking.
 */
export type ApprovalDecision =
  | 'approve'
  | 'reject'
  | { decision: 'approve'; arguments?: Json; remember?: RememberScope }
  | { decision: 'reject'; reason?: string; remember?: RememberScope }

/** One decision per call of the approval, keyed by call id (`approval.calls[i].callId`). */
export interface ApprovalDecisions {
  [callId: string]: ApprovalDecision
}

/** A remembered decision about a tool's calls (`agent.approvalRules()`). */
export interface ApprovalRule {
  /** The rule's id (revoke with it). */
  id: string
  /** The tool it applies to. */
  tool: string
  /** The session it applies to; absent for every session (`remember: 'always'` or `{ host }`). */
  sessionId?: string
  /** The hosts it applies to, for a rule remembered with `{ host }`: `example.com` or `*.example.com`. */
  hostPattern?: string
  /** Whether calls run (`true`) or are rejected. */
  allow: boolean
  /** The reason the model is told when a call is rejected. */
  reason?: string
  /** When it was made (ms since the epoch). */
  createdAtMs: number
}
