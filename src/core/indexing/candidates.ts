/**
 * Indexes waiting for a channel (upholster's catch-up): one entry per
 * index, bounded by `max_waiting_indexes`. An index already waiting keeps
 * its place (the time it has waited, which priorities age from) and takes
 * the newer target; a back-off is never cut short. Ties between equals go
 * by a draw from the core's PRNG (ken's shuffled design docs).
 */
import { nextUint32 } from "../shared/prng.js";
import { count, indexKeyOf, log, update, type Candidate, type Draft } from "./state.js";

export interface NewCandidate {
  readonly db: string;
  readonly spec: Candidate["spec"];
  readonly dbSeq: number;
  readonly indexSeq: number | undefined;
  readonly notBeforeMs: number;
}

/** Wait for a channel (see the file comment). */
export const addCandidate = (d: Draft, next: NewCandidate): void => {
  const key = indexKeyOf(next.db, next.spec);
  const existing = d.state.waiting.get(key);
  if (existing !== undefined) {
    const candidate: Candidate = {
      ...existing,
      spec: next.spec,
      dbSeq: Math.max(existing.dbSeq, next.dbSeq),
      indexSeq: next.indexSeq ?? existing.indexSeq,
      notBeforeMs: Math.max(existing.notBeforeMs, next.notBeforeMs),
    };
    update(d, { waiting: d.state.waiting.set(key, candidate) });
    return;
  }
  if (d.state.waiting.size >= d.state.config.maxWaitingIndexes) {
    count(d, "droppedAtCapacity");
    log(d, "warn", "ken: too many indexes waiting, one is dropped until its db changes again", { db: next.db, index: next.spec.name });
    return;
  }
  const [tieBreak, prng] = nextUint32(d.state.prng);
  const candidate: Candidate = { key, db: next.db, spec: next.spec, dbSeq: next.dbSeq, indexSeq: next.indexSeq, sinceMs: d.nowMs, notBeforeMs: next.notBeforeMs, tieBreak };
  update(d, { waiting: d.state.waiting.set(key, candidate), prng });
};

