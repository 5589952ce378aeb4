/**
 * Ids for documents written without one, as CouchDB's default `[uuids]
 * algorithm = sequential` makes them: 26 random hex digits, then a 6-digit
 * hex counter that grows by a random step (1 to 0xffd); past 0xfff000 a new
 * prefix. Sorted ids keep b-tree inserts cheap in CouchDB, and look the same
 * here.
 */
import { randomBytes, randomInt } from "node:crypto";

const COUNTER_LIMIT = 0xfff000;

const newPrefix = (): string => randomBytes(13).toString("hex");
const step = (): number => randomInt(1, 0xffe);

export function sequentialDocIds(): () => string {
  let prefix = newPrefix();
  let counter = step();
  return () => {
    const id = `${prefix}${counter.toString(16).padStart(6, "0")}`;
    if (counter >= COUNTER_LIMIT) {
      prefix = newPrefix();
      counter = step();
    } else counter += step();
    return id;
  };
}
