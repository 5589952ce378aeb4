/**
 * Starting builds. Two behaviours, chosen by `[ken] catch_up`:
 *
 * - upholster (`catch_up = true`): indexes found behind wait as candidates;
 *   whenever a channel may be free (a build ended, a back-off or ken's
 *   `delay` ran out, a db was inspected) the best candidates (priority.ts)
 *   are offered to ken's start rule, and started while it says yes. A
 *   refused index simply keeps waiting: there is no 60 s timer, and never
 *   more builds than the channels allow.
 * - the seed (`catch_up = false`): at inspection every index is offered to
 *   the rule once, in random order; any refusal resubmits the db after
 *   60 s (`resubmit_refused_msec`), and a finished build does not look
 *   again. Kept to measure the difference (`npm run bench:index-lag`).
 */
import { totalChannels } from "./config.js";
import { resubmitDb } from "./db-queue.js";
import { isFresh, startBuild } from "./jobs.js";
import { rankCandidates } from "./priority.js";
import { shouldStartJob, type JobEntry, type StartAnswer } from "./should-start.js";
import { count, indexKeyOf, log, update, type Candidate, type Draft } from "./state.js";
import type { InspectedIndex } from "./types.js";

/** Candidates looked at per step at most (the rest wait for the next one): bounded work per event. */
const SCAN_LIMIT = 1000;

const answerFor = (d: Draft, candidate: Candidate, indexSeq: number | undefined): StartAnswer => {
  const row = d.state.jobs.get(candidate.key);
  const entry: JobEntry | undefined = row === undefined ? undefined : { seq: row.seq, lastRunMs: row.lastRunMs, running: row.runningJobId !== undefined };
  return shouldStartJob({ entry, dbSeq: candidate.dbSeq, indexSeq, active: d.state.running.size, nowMs: d.nowMs }, d.state.config);
};

/** upholster: start the best waiting candidates while ken's rule and the channels allow. */
export const pumpBuilds = (d: Draft): void => {
  const { config } = d.state;
  if (!config.enabled || !config.catchUp || d.state.waiting.size === 0) return;
  const total = totalChannels(config);
  if (d.state.running.size >= total) return;
  const ranked = rankCandidates(d.state, d.state.waiting.entries().map(([, candidate]) => candidate), d.nowMs);
  let scanned = 0;
  for (const candidate of ranked) {
    if (d.state.running.size >= total || scanned++ >= SCAN_LIMIT) break;
    const known = d.state.known.get(candidate.key);
    const indexSeq = known?.indexSeq ?? candidate.indexSeq;
    if (isFresh({ indexSeq, dbSeq: Math.max(candidate.dbSeq, known?.dbSeq ?? 0) })) {
      update(d, { waiting: d.state.waiting.delete(candidate.key) });
      continue;
    }
    const answer = answerFor(d, candidate, indexSeq);
    if (answer.start) startBuild(d, candidate, answer.channel);
    else if (answer.reason === "too-soon") update(d, { waiting: d.state.waiting.set(candidate.key, { ...candidate, notBeforeMs: answer.retryAtMs ?? d.nowMs + 1 }) });
    else if (answer.reason === "no-room") break;
  }
};

/** When a waiting candidate's back-off or delay ends, if a channel is free to take it. */
export const nextCandidateWakeMs = (d: Draft): number | undefined => {
  if (!d.state.config.catchUp || d.state.running.size >= totalChannels(d.state.config)) return undefined;
  let earliest: number | undefined;
  for (const [, candidate] of d.state.waiting.entries()) {
    if (candidate.notBeforeMs > d.nowMs && (earliest === undefined || candidate.notBeforeMs < earliest)) earliest = candidate.notBeforeMs;
  }
  return earliest;
};

/** The seed: offer each index to the rule once, now; any refusal resubmits the db. */
export const seedStarts = (d: Draft, db: string, dbSeq: number, indexes: readonly InspectedIndex[]): void => {
  if (!d.state.config.enabled) return;
  let refused = false;
  for (const index of indexes) {
    const key = indexKeyOf(db, index.spec);
    const candidate: Candidate = { key, db, spec: index.spec, dbSeq, indexSeq: index.progress?.indexSeq, sinceMs: d.nowMs, notBeforeMs: d.nowMs, tieBreak: 0 };
    const answer = answerFor(d, candidate, index.progress?.indexSeq);
    if (answer.start) startBuild(d, candidate, answer.channel);
    else {
      refused = true;
      count(d, "refusals");
      log(d, "debug", "ken: start refused", { db, index: index.spec.name, reason: answer.reason });
    }
  }
  if (refused) resubmitDb(d, db, d.state.config.resubmitRefusedMs);
};
