/**
 * The persisted form of smoosh's queues (`persist = true`), as in CouchDB
 * 3.x: queued items per channel with their priority, and the objects that
 * were running saved at priority infinity so they are started first after a
 * restart. The codec is the single source of truth; the shell must write
 * `SmooshSnapshotC.encode(snapshot)` (Infinity becomes the string
 * "infinity", which plain JSON cannot hold) and read with
 * `SmooshSnapshotC.decode(JSON.parse(text))`.
 */
import * as t from "io-ts";
import type { CompactionObject } from "./types.js";

/** A priority in JSON: a non-negative finite number, or "infinity". */
export const PriorityJsonC = new t.Type<number, number | "infinity", unknown>(
  "PriorityJson",
  (u): u is number => typeof u === "number" && u >= 0 && !Number.isNaN(u),
  (u, c) =>
    u === "infinity"
      ? t.success(Infinity)
      : typeof u === "number" && Number.isFinite(u) && u >= 0
        ? t.success(u)
        : t.failure(u, c, "expected a non-negative number or \"infinity\""),
  (n) => (n === Infinity ? "infinity" : n),
);

export const CompactionObjectC: t.Type<CompactionObject, CompactionObject, unknown> = t.union([
  t.readonly(t.type({ kind: t.literal("db"), db: t.string })),
  t.readonly(t.type({ kind: t.literal("view"), db: t.string, ddoc: t.string })),
  t.readonly(t.type({ kind: t.literal("cleanup"), db: t.string })),
  t.readonly(t.type({ kind: t.literal("geo"), db: t.string, signature: t.string })),
]);

export const SnapshotItemC = t.readonly(t.type({ object: CompactionObjectC, priority: PriorityJsonC }));

export const SmooshSnapshotC = t.readonly(
  t.type({
    version: t.literal(1),
    savedAtMs: t.number,
    /** Channel name -> items, best first. */
    channels: t.record(t.string, t.readonlyArray(SnapshotItemC)),
  }),
  "SmooshSnapshot",
);

export type SmooshSnapshot = t.TypeOf<typeof SmooshSnapshotC>;
export type SmooshSnapshotJson = t.OutputOf<typeof SmooshSnapshotC>;
