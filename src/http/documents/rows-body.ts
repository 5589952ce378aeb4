/**
 * Row lists as CouchDB writes them (`_all_docs`, views): the head members,
 * then `"rows":[` with one row per line, separated by `,\r\n`.
 */
import type { ServerResponse } from "node:http";
import { sendJsonText } from "../respond.js";

export function rowsBody(head: Readonly<Record<string, unknown>>, rows: readonly unknown[]): string {
  const headText = JSON.stringify(head).slice(0, -1);
  const separator = headText === "{" ? "" : ",";
  return `${headText}${separator}"rows":[\r\n${rows.map((row) => JSON.stringify(row)).join(",\r\n")}\r\n]}\n`;
}

export function sendRows(res: ServerResponse, head: Readonly<Record<string, unknown>>, rows: readonly unknown[]): void {
  sendJsonText(res, 200, rowsBody(head, rows));
}
