/**
 * CouchDB 3.4's exact `/_db_updates` framing (fixtures 76, 78, 79, 81):
 * normal/longpoll `{"results":[\n` rows joined by `,\r\n` then
 * `\n],\n"last_seq":<seq>}\n`; continuous one row per line, heartbeat `\n`,
 * end `{"last_seq":<seq>}\n`; eventsource frames.
 */
import type { DbUpdateRow } from "../../core/db-updates/index.js";

export const RESULTS_OPEN = '{"results":[\n';
export const ROW_SEPARATOR = ",\r\n";
export const resultsClose = (lastSeq: string): string => `\n],\n"last_seq":${JSON.stringify(lastSeq)}}\n`;

export const continuousRow = (row: DbUpdateRow): string => `${JSON.stringify(row)}\n`;
export const continuousEnd = (lastSeq: string): string => `${JSON.stringify({ last_seq: lastSeq })}\n`;
export const CONTINUOUS_HEARTBEAT = "\n";

/**
 * Deliberate difference: CouchDB 3.4.3 crashes on its first event after a
 * heartbeat and writes a 500 into the stream (fixture 80), and without one
 * sends raw `_global_changes` rows with a JSON-quoted `id:` (81). We send the
 * same `{db_name,type,seq}` rows as the other feeds, `id:` the bare seq (so
 * `Last-Event-ID` can be passed back as `since`), and heartbeat events.
 */
export const eventsourceRow = (row: DbUpdateRow): string => `data: ${JSON.stringify(row)}\nid: ${row.seq}\n\n`;
export const EVENTSOURCE_HEARTBEAT = "event: heartbeat\ndata: \n\n";
