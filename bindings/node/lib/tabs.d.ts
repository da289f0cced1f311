/** One agent session per browser tab: the tab hub. */
import type { AgentOptions } from './agent.js'
import type { AgentEvent } from './events.js'
import type { Run } from './run.js'
import type { Session } from './session.js'

/** Which tab tools a tab's agent gets (both off by default). */
export interface TabPermissions {
  sendToTab?: boolean
  readTab?: boolean
}

/** A tab as the hub sees it. */
export interface TabHubTab {
  id: string
  handle: string | null
  sessionId: string
  open: boolean
  state: string
  queueLen: number
  autoWakeBudget: number
  held: boolean
  awaitingUser: boolean
  permissions: { sendToTab: boolean; readTab: boolean }
}

/** What a delivery did. */
export interface Delivery {
  status: 'started' | 'queued' | 'held'
  queueLen: number
  autoWakeBudget: number
  awaitingUser: boolean
  /** The turn that started, for `started`. */
  run: Run | null
}

/** An event of the hub: `tab_opened`, `tab_closed`, `state_changed`, `agent` (with `event`) or `notice`. */
export interface TabEvent {
  tabId: string
  type: string
  /** For `agent`: the tab agent's event. */
  event?: AgentEvent
  [key: string]: unknown
}

/** Options of a tab hub: the options of every tab's agent, plus the hub's own. */
export interface TabHubOptions extends AgentOptions {
  /** Agent-to-agent wakes of an idle tab allowed before a human message. */
  autoWakeBudget?: number
  /**
   * Messages from other tabs' agents one tab's queue may hold (default 32); past it such a
   * message is refused (`TabQueueFullError`). Messages from the person are never refused.
   */
  maxHeldMessages?: number
  /** Whether new tabs get `send_to_tab`. */
  sendToTab?: boolean
  /** Whether new tabs get `read_tab`. */
  readTab?: boolean
}

/**
 * One agent session per browser tab: short git-style handles, `send_to_tab` / `read_tab`
 * (off unless permitted), queueing for busy tabs and an auto-wake budget.
 */
export declare class TabHub {
  private constructor()
  static create(options: TabHubOptions): Promise<TabHub>
  /** Opens a tab; returns its id. */
  openTab(permissions?: TabPermissions): Promise<string>
  closeTab(tab: string): Promise<void>
  reopenTab(tab: string): Promise<void>
  /** Delivers a message: an idle tab starts a turn, a busy one queues it. */
  /**
   * `signal` cancels the turn this delivery started; an already-aborted one delivers nothing
   * and rejects (`AgentCoreError`, code `cancelled`). Queued and held messages are not affected.
   * An `agent` message to a tab already holding `maxHeldMessages` of them rejects with
   * `TabQueueFullError`.
   */
  deliver(tab: string, text: string, options?: { origin?: 'human' | 'agent'; signal?: AbortSignal }): Promise<Delivery>
  /** Resolves a handle or id prefix. */
  resolve(input: string):
    | { status: 'ok'; tab: string; handle: string }
    | { status: 'none'; openHandles: string[]; openCount: number }
    | { status: 'ambiguous'; matches: string[] }
    | { status: 'invalid'; [key: string]: unknown }
  handle(tab: string): string | null
  tabs(): TabHubTab[]
  tab(tab: string): TabHubTab | null
  setPermissions(tab: string, permissions: TabPermissions): Promise<void>
  /** What `read_tab` returns: the last answer and state. */
  read(tab: string): Promise<{ tabId: string; handle: string | null; state: string; lastResponse: string | null }>
  session(tab: string): Promise<Session>
  cancel(tab: string): Promise<void>
  waitIdle(tab: string): Promise<TabHubTab>
  waitAllIdle(): Promise<void>
  events(): AsyncGenerator<TabEvent, void, undefined>
  close(): void
}
