/** Runs: one turn each, in the background. */
import type { AgentEvent, Json, Outcome } from './events.js'

/**
 * What a run is doing. `awaiting_user`: parked on a question; `awaiting_approval`: parked until
 * the person approves or rejects a gated call.
 */
export type RunState =
  | 'idle'
  | 'thinking'
  | 'tool_call'
  | 'complete'
  | 'error'
  | 'cancelled'
  | 'awaiting_user'
  | 'awaiting_approval'

/** A cheap snapshot of a run's progress. */
export interface RunStatus {
  state: RunState
  /** The current model call, from 1 (0 before the first). */
  iteration: number
  /** The tool running now, if any. */
  currentTool: string | null
  /**
   * The latest assistant text. While the model streams an answer, the text so far: it grows
   * with every streamed piece, so a host that polls `status()` shows progress.
   */
  lastMessage: string | null
  /** The error, once the run failed. */
  error: string | null
}

/**
 * One turn, running in the background. `T` is the type of a typed turn's answer
 * (`session.sendTyped`), in `outcome.structured`.
 */
export declare class Run<T = Json> {
  private constructor()
  readonly id: string
  readonly sessionId: string
  /** A cheap snapshot of the run's progress. */
  status(): RunStatus
  /** Asks the run to stop; it ends `cancelled` promptly. */
  cancel(): void
  /** Whether the run has finished. */
  readonly finished: boolean
  /** The outcome, once the run ends. Never rejects: look at `status`. */
  readonly outcome: Promise<Outcome<T>>
  /**
   * The final text; rejects unless the run ended `done`: with the original error when a JS tool
   * threw a fatal one, else with a `RunError`.
   */
  result(): Promise<string>
  /** The run's events; the first call sees every event. Ends after the final event. */
  events(): AsyncGenerator<AgentEvent, void, undefined>
}
