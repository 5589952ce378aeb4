/**
 * Persisted smoosh state crosses a trust boundary (a file anyone can edit, a
 * store that may be corrupted): it is always decoded with the core's codec
 * before the core sees it, and a bad one is reported, never trusted.
 */
import { PathReporter } from "io-ts/lib/PathReporter.js";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { SmooshSnapshotC, type SmooshSnapshot } from "../../core/compaction/snapshot.js";

/** The StatePort key smoosh's queues are saved under. */
export const SMOOSH_STATE_KEY = "smoosh";

export const encodeSnapshot = (snapshot: SmooshSnapshot): unknown => SmooshSnapshotC.encode(snapshot);

export const decodeSnapshot = (raw: unknown): Either<string[], SmooshSnapshot> => {
  const decoded = SmooshSnapshotC.decode(raw);
  return isLeft(decoded) ? left(PathReporter.report(decoded).slice(0, 10)) : right(decoded.right);
};
