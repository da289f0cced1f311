/** One agent session per browser tab: the tab hub. */
import type { AgentOptions } from './agent.js'
import type { ApprovalDecisions } from './approvals.js'
import type { AgentEvent } from './events.js'
import type { BrowserHost } from './hosts.js'
import type { HostTab, OpenedTab, OpenedTabOwner, TabHubPageTools } from './tab_wiring.js'
import type { Run, TypedRun } from './run.js'
import type { Session, TypedSchema } from './session.js'

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

/** What a delivery did; `R` is the type of the run that started (a {@link TypedRun} for a typed delivery). */
export interface Delivery<R = Run> {
  status: 'started' | 'queued' | 'held'
  queueLen: number
  autoWakeBudget: number
  awaitingUser: boolean
  /**
   * The turn that started, for `started`. A typed delivery's run (`schema`) is a
   * {@link TypedRun}: `run.result()` resolves with the parsed answer.
   */
  run: R | null
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
  /**
   * Gives every tab's agent page tools over this host, bound to the browser tab its hub tab is
   * wired to (one agent per browser tab): the host itself, or `{ host, ...page tool options }`.
   * Do not also put `pageTools(host)` in `tools`: that set acts on the active tab, and the
   * names would clash (refused with a `ConfigError`).
   */
  pageTools?: BrowserHost | TabHubPageTools
  /**
   * Who gets a browser tab that a tab's agent opens with tab_open (default `same_agent`). A
   * function decides per tab while the agent's tab_open call waits: it must answer
   * synchronously, and a throw or another answer keeps the default (with a process warning).
   */
  openedTabPolicy?: OpenedTabOwner | ((opened: OpenedTab) => OpenedTabOwner)
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
  /**
   * Opens a tab wired to the host's browser tab `hostTab` (the id the host's `tabs()` reports):
   * its page tools act there. Returns the hub tab's id.
   */
  openTabForHost(hostTab: string): Promise<string>
  /**
   * Wires the browser tab `hostTab` to `tab` (taking it from another hub tab) and makes it the
   * one `tab`'s agent works in. Throws (`tab_not_found`) for a tab the hub does not have.
   */
  wireHostTab(tab: string, hostTab: string): void
  /**
   * Tells the hub that a browser tab closed; returns the hub tab it belonged to, or null. That
   * tab's page tools then fail with an error telling its model not to retry; the hub tab stays
   * open until `closeTab`.
   */
  hostTabClosed(hostTab: string): string | null
  /** The browser tab `tab`'s agent works in. */
  hostTab(tab: string): HostTab
  /** Every open browser tab that belongs to `tab`, oldest first. */
  hostTabs(tab: string): string[]
  /** The hub tab a browser tab belongs to, or null. */
  tabForHost(hostTab: string): string | null
  /**
   * Hands a browser tab that `opener`'s agent opened outside tab_open (a popup, say) to its
   * owner, as `openedTabPolicy` decides; returns the hub tab that got it.
   */
  adoptHostTab(opener: string, hostTab: string, url?: string): Promise<string>
  closeTab(tab: string): Promise<void>
  reopenTab(tab: string): Promise<void>
  /**
   * Delivers a message: an idle tab starts a turn, a busy one queues it (the queued message
   * starts its own turn when the current one ends). The hub sees a turn end just after its
   * run's `outcome` resolves: `await hub.waitIdle(tab)` first to get a `started` delivery.
   * `signal` cancels the turn this delivery started; an already-aborted one delivers nothing
   * and rejects (`AgentCoreError`, code `cancelled`). Queued and held messages are not affected.
   * An `agent` message to a tab already holding `maxHeldMessages` of them rejects with
   * `TabQueueFullError`.
   *
   * With `schema` (what `session.sendTyped` takes, named by `name`) the turn that reads the
   * message is a typed turn of its own: never merged with other queued messages, and still
   * typed when the tab is restored from its store; its `outcome.structured` holds the answer.
   * `strict` as in `sendTyped`.
   */
  deliver(
    tab: string,
    text: string,
    options: { origin?: 'human' | 'agent'; signal?: AbortSignal; schema: TypedSchema; name?: string; strict?: boolean },
  ): Promise<Delivery<TypedRun>>
  /** An untyped delivery (see above). */
  deliver(
    tab: string,
    text: string,
    options?: { origin?: 'human' | 'agent'; signal?: AbortSignal; schema?: undefined; name?: string },
  ): Promise<Delivery>
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
  /**
   * Answers the question `tab`'s turn is parked on; the turn goes on in the returned run, and
   * queued messages follow when it ends. A wrong kind of answer rejects with a
   * `ClarificationError` and the question stays pending.
   */
  answerClarification(tab: string, clarificationId: string, answer: string): Promise<Run>
  /**
   * Dismisses the question `tab`'s turn is parked on, without a turn; messages held only for
   * the person then start one, within the auto-wake budget. Rejects with a
   * `ClarificationError` when the question is no longer pending.
   */
  dismissClarification(tab: string, clarificationId: string): Promise<void>
  /**
   * Answers the approval `tab`'s turn is parked on (see `Session.resolveApproval`); the turn
   * goes on in the returned run, and queued messages follow when it ends. A refused answer
   * rejects with an `ApprovalError` and the approval stays pending.
   */
  resolveApproval(tab: string, approvalId: string, decisions: ApprovalDecisions): Promise<Run>
  /**
   * Dismisses the approval `tab`'s turn is parked on, without a turn: its calls do not run;
   * messages held only for the person then start one, within the auto-wake budget. Rejects
   * with an `ApprovalError` when it is no longer pending.
   */
  dismissApproval(tab: string, approvalId: string): Promise<void>
  waitIdle(tab: string): Promise<TabHubTab>
  waitAllIdle(): Promise<void>
  events(): AsyncGenerator<TabEvent, void, undefined>
  close(): void
}
