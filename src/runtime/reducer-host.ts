/**
 * Hosts a pure core: holds its state, steps it with each event at the
 * scheduler's time, and hands the effects to the shell. A core that throws
 * (a bug) drops that one event, logged, and the daemon goes on.
 */
import { errorText } from "../core/shared/error-text.js";
import type { Logger, Scheduler } from "../ports/shell.js";

export interface CoreStep<S, F> {
  readonly state: S;
  readonly effects: readonly F[];
}

export interface ReducerHostOptions<S, E extends { readonly type: string }, F> {
  readonly initial: S;
  readonly step: (state: S, event: E, nowMs: number) => CoreStep<S, F>;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** Carries out one step's effects (in order). */
  readonly perform: (effects: readonly F[]) => void;
}

export interface ReducerHost<S, E> {
  state(): S;
  /** Replace the state and carry out effects, e.g. from the core's `init`. */
  reset(step: CoreStep<S, unknown>): void;
  dispatch(event: E): void;
  /** Events are dropped while closed (before start, after stop). */
  setOpen(open: boolean): void;
  isOpen(): boolean;
}

export function createReducerHost<S, E extends { readonly type: string }, F>(options: ReducerHostOptions<S, E, F>): ReducerHost<S, E> {
  let state = options.initial;
  let open = false;
  return {
    state: () => state,
    reset(step) {
      state = step.state;
      options.perform(step.effects as readonly F[]);
    },
    dispatch(event) {
      if (!open) return;
      let result: CoreStep<S, F>;
      try {
        result = options.step(state, event, options.scheduler.nowMs());
      } catch (error) {
        options.logger.error({ event: event.type, err: errorText(error) }, "the core rejected an event");
        return;
      }
      state = result.state;
      options.perform(result.effects);
    },
    setOpen(next) {
      open = next;
    },
    isOpen: () => open,
  };
}
