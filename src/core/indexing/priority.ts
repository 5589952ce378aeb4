/**
 * Which waiting index gets the next free channel. The RFC's main weakness
 * was "no concept of priority"; here an index's place is
 *
 *     waiting since − boost
 *
 * (earliest first), where the boost is `hint_boost_msec` for an index the
 * operator prioritized (until it is fresh), `query_boost_msec` for one
 * queried within `query_window_msec`, else 0; ties go to the smaller
 * backlog (it is done sooner), then to a random draw (ken's shuffled
 * design docs).
 *
 * It is aging: every index's standing improves with the time it waits, and
 * a newcomer's is at most the largest boost ahead of its arrival, so
 *
 * - an unqueried index is never overtaken by a queried one that started
 *   waiting more than `query_boost_msec` after it (no starvation: it waits
 *   at most the boost plus the builds of those already ahead of it);
 * - a queried index is overtaken by an unqueried one only if that one has
 *   waited at least `query_boost_msec` longer.
 */
import { ddocKeyOf, type Candidate, type IndexingState } from "./state.js";

export type PriorityClass = "hint" | "queried" | "normal";

/** Why an index is where it is. */
export const priorityClassOf = (state: IndexingState, db: string, ddocs: readonly string[], nowMs: number): PriorityClass => {
  if (state.hints.has(ddocKeyOf(db, "")) || ddocs.some((ddoc) => state.hints.has(ddocKeyOf(db, ddoc)))) return "hint";
  const recent = (ddoc: string): boolean => {
    const atMs = state.queried.timeOf(ddocKeyOf(db, ddoc));
    return atMs !== undefined && nowMs - atMs <= state.config.queryWindowMs;
  };
  return ddocs.some(recent) ? "queried" : "normal";
};

export const boostMsOf = (state: IndexingState, klass: PriorityClass): number =>
  klass === "hint" ? state.config.hintBoostMs : klass === "queried" ? state.config.queryBoostMs : 0;

interface Ranked {
  readonly candidate: Candidate;
  readonly standingMs: number;
  readonly backlog: number;
}

const compareRanked = (a: Ranked, b: Ranked): number =>
  a.standingMs - b.standingMs || a.backlog - b.backlog || a.candidate.tieBreak - b.candidate.tieBreak || (a.candidate.key < b.candidate.key ? -1 : a.candidate.key > b.candidate.key ? 1 : 0);

/** The candidates that may start now (their back-off or delay is over), best first. */
export const rankCandidates = (state: IndexingState, candidates: readonly Candidate[], nowMs: number): Candidate[] =>
  candidates
    .filter((candidate) => candidate.notBeforeMs <= nowMs)
    .map((candidate): Ranked => ({
      candidate,
      standingMs: candidate.sinceMs - boostMsOf(state, priorityClassOf(state, candidate.db, candidate.spec.ddocs, nowMs)),
      backlog: candidate.dbSeq - (candidate.indexSeq ?? 0),
    }))
    .sort(compareRanked)
    .map((ranked) => ranked.candidate);
