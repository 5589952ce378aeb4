/**
 * Reconciliation, the walk: which page comes next, and when a pass is done.
 *
 * A pass visits every db once, page by page in `_all_dbs` order, starting
 * wherever the cursor is and wrapping round past the last db: "every db once,
 * each after the moment the pass was asked for" is what makes it complete, not
 * where it starts. So:
 * - a request while a pass is under way (the source dropped events again)
 *   just moves the pass's end to one full round from the cursor (from the
 *   end of the page being read, which is then read again last);
 * - an interrupted pass (stop, crash, outage) resumes from its persisted
 *   cursor; after a restart it is asked for again, so it also goes round
 *   once more from there (events may have been lost while down).
 *
 * The very first pass (nothing persisted) records a baseline: dbs no pass has
 * covered yet are recorded without events. `baselineThrough` is how far that
 * first round got, so a baseline interrupted half-way resumes as a baseline
 * only where it had not been yet.
 */
import * as t from "io-ts";
import { compareDbNames } from "./db-order.js";

export interface PassState {
  /** A pass is under way. */
  readonly active: boolean;
  /** The next page starts after this db; undefined: at the first db. */
  readonly cursor: string | undefined;
  /** After wrapping, the pass ends once a page reaches this db; undefined: it ends at the end of the list. */
  readonly endAfter: string | undefined;
  /** The pass went past the last db and started again from the first. */
  readonly wrapped: boolean;
  /** Baseline: dbs after this one (null: all) have never been covered; undefined: no baseline (it is complete). */
  readonly baselineThrough: string | null | undefined;
}

export interface PageQuery {
  /** List dbs strictly after this one (undefined: from the first). */
  readonly after: string | undefined;
  readonly limit: number;
}

export interface PageCovered {
  /** The last db of the page when it was full; undefined when the page reached the end of the list. */
  readonly through: string | undefined;
}

/** Nothing persisted: an idle pass state whose first pass will record a baseline. */
export const freshPass = (): PassState => ({ active: false, cursor: undefined, endAfter: undefined, wrapped: false, baselineThrough: null });

/** Ask for a pass: one full round from the cursor, whether or not one is under way. */
export const requestPass = (state: PassState): PassState => ({ ...state, active: true, endAfter: state.cursor, wrapped: false });

export const nextPage = (state: PassState, pageSize: number): PageQuery | undefined =>
  state.active ? { after: state.cursor, limit: Math.max(1, pageSize) } : undefined;

/** The range a page of this query covered: names after `after`, through `through` (or to the end). */
export function pageCovered(query: PageQuery, listed: readonly string[]): PageCovered {
  return { through: listed.length < query.limit ? undefined : listed[listed.length - 1] };
}

/**
 * The walk after a page. `requestedMeanwhile`: a pass was asked for while the
 * page was being read, so its snapshot may predate the missed events; the
 * walk still moves on (continual requests must not stall it) but the new
 * round ends only once it has read this page's range again.
 */
export function pageDone(state: PassState, covered: PageCovered, requestedMeanwhile = false): PassState {
  const next = advance(state, covered);
  if (!requestedMeanwhile) return next;
  return { ...next, active: true, cursor: covered.through, endAfter: covered.through, wrapped: false };
}

function advance(state: PassState, covered: PageCovered): PassState {
  const through = covered.through;
  if (through === undefined) {
    // The end of the list: the baseline has been everywhere.
    if (state.endAfter === undefined || state.wrapped) return { ...state, active: false, cursor: undefined, wrapped: false, baselineThrough: undefined };
    return { ...state, cursor: undefined, wrapped: true, baselineThrough: undefined };
  }
  const baselineThrough = state.baselineThrough === undefined ? undefined : later(state.baselineThrough, through);
  const done = state.wrapped && state.endAfter !== undefined && compareDbNames(through, state.endAfter) >= 0;
  return { ...state, active: !done, cursor: through, wrapped: done ? false : state.wrapped, baselineThrough };
}

/** Whether an unknown db in a page is part of the baseline (recorded silently). */
export const adoptsSilently = (state: PassState, db: string): boolean =>
  state.baselineThrough === null || (state.baselineThrough !== undefined && compareDbNames(db, state.baselineThrough) > 0);

const later = (a: string | null, b: string): string => (a === null || compareDbNames(b, a) > 0 ? b : a);

// --- persisted form ------------------------------------------------------------------

/** JSON has no `undefined`: absent fields are undefined; `baseline` absent means complete. */
export const PersistedPass = t.intersection(
  [
    t.type({ active: t.boolean, wrapped: t.boolean }),
    t.partial({ cursor: t.string, endAfter: t.string, baseline: t.type({ through: t.union([t.string, t.null]) }) }),
  ],
  "ReconcilePass",
);
export type PersistedPass = t.TypeOf<typeof PersistedPass>;

export const passToJson = (s: PassState): PersistedPass => ({
  active: s.active,
  wrapped: s.wrapped,
  ...(s.cursor === undefined ? {} : { cursor: s.cursor }),
  ...(s.endAfter === undefined ? {} : { endAfter: s.endAfter }),
  ...(s.baselineThrough === undefined ? {} : { baseline: { through: s.baselineThrough } }),
});

export const passFromJson = (p: PersistedPass): PassState => ({
  active: p.active,
  wrapped: p.wrapped,
  cursor: p.cursor,
  endAfter: p.endAfter,
  baselineThrough: p.baseline === undefined ? undefined : p.baseline.through,
});
