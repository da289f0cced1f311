/**
 * How a tab hub wires its tabs to the browser tabs of a JS host (`TabHubOptions.pageTools`,
 * `openedTabPolicy`, `hub.hostTab(tab)`): the types; the hub's methods are on `TabHub`.
 */
import type { BrowserHost, PageToolsOptions } from './hosts.js'

/** The browser tab a hub tab's agent works in (`hub.hostTab(tab)`). */
export type HostTab =
  /** No browser tab was ever wired to the hub tab. */
  | { state: 'unwired' }
  /** This browser tab, open as far as the host told the hub. */
  | { state: 'open'; hostTab: string }
  /** The browser tab it worked in closed (`hostTabClosed`), and no other was wired since. */
  | { state: 'closed'; hostTab: string }

/** A browser tab a hub tab's agent opened, as a function `openedTabPolicy` sees it. */
export interface OpenedTab {
  /** The hub tab whose agent opened it. */
  opener: string
  /** The host's id for the new browser tab. */
  hostTab: string
  /** Its address when it opened (empty for a blank tab). */
  url: string
}

/**
 * Who gets a browser tab that a tab's agent opened: `same_agent` (the default) keeps it with
 * the agent that opened it, which works in it from then on; `new_agent` gives it to a new hub
 * tab with its own agent and session (and the hub's default permissions), and the opener keeps
 * working in its own tab.
 */
export type OpenedTabOwner = 'same_agent' | 'new_agent'

/**
 * Page tools for every tab's agent (`TabHubOptions.pageTools`): the host they act through and
 * the page tool options. Each agent's tools act on the browser tab its hub tab is wired to
 * (`openTabForHost`, `wireHostTab`), whatever tab is active, looked up on every call.
 */
export interface TabHubPageTools extends PageToolsOptions {
  host: BrowserHost
}
