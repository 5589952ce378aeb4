/**
 * Reconciliation, the decision: what the feed must say so that its clients'
 * view of the dbs in one range equals the server's.
 *
 * Input: what upholster knows (per db: live with the update seq its feed
 * rows cover, or "uncertain") and what the server has, for one range of names
 * in `_all_dbs` order. The range is one page of `_all_dbs`, so a db upholster
 * knows that is missing from the page was deleted: the caller merge-walks its
 * sorted knowledge against the server's sorted pages. Output: the events to
 * emit (they go through the normal listener and writer) and the seqs to
 * record once those events are written.
 *
 * Rules (each db in the range):
 * - on the server, known live: `updated` when its seq moved;
 * - on the server, unknown: `created`, and `updated` when it was written
 *   (seq not 0); in a first pass's baseline it is only recorded: a first
 *   start must not replay history as new dbs;
 * - not on the server, known live: `deleted`;
 * - uncertain (a created/deleted row may or may not have been written when
 *   upholster died): the server's state is stated again (`created` (+`updated`)
 *   or `deleted`), at the cost of a repeat, never of a loss;
 * - a db the knowledge has no room for is reported untracked, not emitted
 *   (it would otherwise be "created" again on every pass).
 * Repeats are allowed (the feed is at-least-once); losses are not.
 */
import { compareDbNames } from "./db-order.js";
import type { EventKey } from "./keys.js";
import { SEQ_NEVER_WRITTEN, seqMoved, type SeqMark } from "./seq-mark.js";

/** What upholster knows of one db. `seq` undefined: not live (only an uncertain db is known without one). */
export interface KnownDb {
  readonly seq?: SeqMark | undefined;
  readonly uncertain?: boolean | undefined;
}

export interface PageInput {
  /** Every db upholster knows in the page's range. */
  readonly known: ReadonlyMap<string, KnownDb>;
  /** Every db the server has in the range, with its update seq. */
  readonly server: ReadonlyMap<string, SeqMark>;
  /** Unknown dbs for which this holds are recorded silently (a first pass's baseline). */
  readonly adopt: (db: string) => boolean;
  /** How many more dbs the knowledge may hold. */
  readonly room: number;
}

export interface PageDecision {
  /** In `_all_dbs` order; `created` before `updated` for the same db. */
  readonly events: readonly EventKey[];
  /** Once `events` are written: these dbs are live at these seqs. */
  readonly record: readonly (readonly [db: string, seq: SeqMark])[];
  /** Dbs on the server the knowledge had no room for. */
  readonly untracked: readonly string[];
}

export function decidePage(input: PageInput): PageDecision {
  const events: EventKey[] = [];
  const record: [string, SeqMark][] = [];
  const untracked: string[] = [];
  let room = input.room;
  const names = [...new Set([...input.known.keys(), ...input.server.keys()])].sort(compareDbNames);
  for (const db of names) {
    const known = input.known.get(db);
    const seq = input.server.get(db);
    if (seq === undefined) {
      if (known !== undefined && (known.uncertain === true || known.seq !== undefined)) events.push({ type: "deleted", db });
      continue;
    }
    if (known?.uncertain === true) {
      events.push(...creation(db, seq));
      record.push([db, seq]);
    } else if (known?.seq !== undefined) {
      if (seqMoved(known.seq, seq)) {
        events.push({ type: "updated", db });
        record.push([db, seq]);
      }
    } else if (room <= 0) {
      untracked.push(db);
    } else {
      room--;
      if (!input.adopt(db)) events.push(...creation(db, seq));
      record.push([db, seq]);
    }
  }
  return { events, record, untracked };
}

const creation = (db: string, seq: SeqMark): EventKey[] =>
  seq === SEQ_NEVER_WRITTEN ? [{ type: "created", db }] : [{ type: "created", db }, { type: "updated", db }];
