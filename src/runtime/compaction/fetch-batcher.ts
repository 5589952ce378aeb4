/**
 * Info fetches asked for during one synchronous burst (a bulk write emits
 * many events in a row) go out together a microtask later: one `dbInfos`
 * call instead of many, and each reads the db after the whole burst, not
 * after its first write.
 */
import type { SmooshEvent } from "../../core/compaction/index.js";
import type { GeoIndexFiles } from "../../ports/geo.js";
import type { CompactionStore } from "../../ports/store.js";
import type { InFlight } from "../in-flight.js";
import { fetchInfos, type FetchInfoEffect } from "./fetch-info.js";

export type FetchBatcher = (effect: FetchInfoEffect) => void;

export function createFetchBatcher(
  store: CompactionStore,
  inFlight: InFlight,
  answer: (event: SmooshEvent) => void,
  geoFiles?: GeoIndexFiles,
): FetchBatcher {
  let batch: FetchInfoEffect[] | undefined;
  return (effect) => {
    if (batch !== undefined) {
      batch.push(effect);
      return;
    }
    const current: FetchInfoEffect[] = [effect];
    batch = current;
    inFlight.track(
      Promise.resolve().then(() => {
        batch = undefined;
        return fetchInfos(store, current, answer, geoFiles);
      }),
    );
  };
}
