/**
 * smoosh's queues through the StatePort (`[smoosh] persist = true`).
 *
 * Persisted state crosses a trust boundary (a file anyone can edit, a store
 * that may be corrupted): it is always decoded with the core's codec before
 * the core sees it, and a bad one is reported, never trusted. Saves are
 * chained so an older snapshot never lands after a newer one.
 */
import { PathReporter } from "io-ts/lib/PathReporter.js";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { SmooshSnapshotC, type SmooshSnapshot } from "../../core/compaction/snapshot.js";
import { errorText } from "../../core/shared/error-text.js";
import type { Logger, StatePort } from "../../ports/shell.js";
import type { InFlight } from "../in-flight.js";

/** The StatePort key smoosh's queues are saved under. */
export const SMOOSH_STATE_KEY = "smoosh";

export const encodeSnapshot = (snapshot: SmooshSnapshot): unknown => SmooshSnapshotC.encode(snapshot);

export const decodeSnapshot = (raw: unknown): Either<string[], SmooshSnapshot> => {
  const decoded = SmooshSnapshotC.decode(raw);
  return isLeft(decoded) ? left(PathReporter.report(decoded).slice(0, 10)) : right(decoded.right);
};

export interface SnapshotStore {
  save(snapshot: SmooshSnapshot): void;
  /** The saved snapshot, decoded; undefined when none, unreadable or invalid (each logged). */
  load(): Promise<SmooshSnapshot | undefined>;
}

export function createSnapshotStore(port: StatePort, inFlight: InFlight, logger: Logger): SnapshotStore {
  let saveChain: Promise<void> = Promise.resolve();
  return {
    save(snapshot) {
      saveChain = saveChain.then(async () => {
        try {
          await port.save(SMOOSH_STATE_KEY, encodeSnapshot(snapshot));
        } catch (error) {
          logger.warn({ err: errorText(error) }, "could not save the smoosh state; will try at the next checkpoint");
        }
      });
      inFlight.track(saveChain);
    },
    async load() {
      let raw: unknown;
      try {
        raw = await port.load(SMOOSH_STATE_KEY);
      } catch (error) {
        logger.warn({ err: errorText(error) }, "could not load the saved smoosh state; starting with empty queues");
        return undefined;
      }
      if (raw === undefined) return undefined;
      const decoded = decodeSnapshot(raw);
      if (isLeft(decoded)) {
        logger.warn({ errors: decoded.left }, "ignoring a saved smoosh state that does not decode; starting with empty queues");
        return undefined;
      }
      return decoded.right;
    },
  };
}
