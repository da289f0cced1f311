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
  | 'awaiting_tools'

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
 * (`session.sendTyped`), in `outcome.structured`; `R` is what `result()` resolves with: the
 * final text, or the answer for a typed turn ({@link TypedRun}).
 */
export declare class Run<T = Json, R = string> {
  private constructor()
  readonly id: string
  readonly sessionId: string
  /** What `JSON.stringify` writes of the run: its ids. */
  toJSON(): { id: string; sessionId: string }
  /** A cheap snapshot of the run's progress. */
  status(): RunStatus
  /** Asks the run to stop; it ends `cancelled` promptly. */
  cancel(): void
  /** Whether the run has finished. */
  readonly finished: boolean
  /** The outcome, once the run ends. Never rejects: look at `status`. */
  readonly outcome: Promise<Outcome<T>>
  /**
   * The final text, or for a typed turn the parsed, checked answer (`outcome.structured`; the
   * raw text stays in `outcome.finalText`). Rejects unless the run ended `done`: with the
   * original error when a JS tool threw a fatal one, else with a `RunError`.
   */
  result(): Promise<R>
  /** The run's events; the first call sees every event. Ends after the final event. */
  events(): AsyncGenerator<AgentEvent, void, undefined>
}

/**
 * The run of a typed turn (`session.sendTyped`, `hub.deliver` with a `schema`): `result()`
 * resolves with the parsed, checked answer of type `T`, as `outcome.structured` holds it.
 */
export type TypedRun<T = Json> = Run<T, T>
