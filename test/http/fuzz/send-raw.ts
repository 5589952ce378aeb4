/**
 * Sends raw bytes over a `net` socket and judges every response that came
 * back. `end` exchanges half-close once the server has gone quiet and then
 * wait for it to close the connection (a server that never does is a hang);
 * `cut` exchanges reset the connection after a moment.
 */
import { connect, type Socket } from "node:net";
import type { RawExchange } from "./exchanges.js";
import { problemWith, type Outcome } from "./oracle.js";
import { parseResponses } from "./raw-responses.js";
import { HANG_MS } from "./send-client.js";

/** Quiet this long after the last byte either way: the server has said what it will say. */
const QUIET_MS = 150;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  bytes: string;
  closed: boolean;
  lastActivityMs: number;
}

/** Writes each piece, waiting `pauseMs` between them; stops early when the server has closed. */
async function writeAll(socket: Socket, exchange: RawExchange, received: Received): Promise<void> {
  for (const [i, piece] of exchange.writes.entries()) {
    if (received.closed || socket.destroyed) return;
    if (i > 0 && exchange.pauseMs > 0) await pause(exchange.pauseMs);
    socket.write(Buffer.from(piece, "latin1"));
    received.lastActivityMs = Date.now();
  }
}

/** Half-closes once nothing moved for QUIET_MS; resolves when the server has closed (or HANG_MS passed). */
async function endWhenQuiet(socket: Socket, received: Received): Promise<boolean> {
  const startedMs = Date.now();
  let ended = false;
  while (!received.closed) {
    if (Date.now() - startedMs > HANG_MS) return false;
    if (!ended && Date.now() - received.lastActivityMs >= QUIET_MS) {
      ended = true;
      socket.end();
    }
    await pause(20);
  }
  return true;
}

export async function sendRaw(port: number, exchange: RawExchange): Promise<Outcome> {
  const received: Received = { bytes: "", closed: false, lastActivityMs: Date.now() };
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  socket.on("data", (chunk: Buffer) => {
    received.bytes += chunk.toString("latin1");
    received.lastActivityMs = Date.now();
  });
  // A reset or a write after the server closed is an ordinary end here: what arrived is judged.
  socket.on("error", () => undefined);
  // The server's FIN: it has said all it will (our side is closed in turn, this socket being half-open).
  socket.on("end", () => {
    received.closed = true;
    socket.end();
  });
  socket.on("close", () => (received.closed = true));
  await new Promise<void>((resolve) => {
    socket.once("connect", resolve);
    socket.once("close", resolve);
  });
  await writeAll(socket, exchange, received);
  if (exchange.finish.kind === "cut") {
    await pause(exchange.finish.afterMs);
    socket.destroy();
  } else if (!(await endWhenQuiet(socket, received))) {
    socket.destroy();
    return { statuses: [], problem: `the server never closed the connection (a hang); it sent ${JSON.stringify(received.bytes.slice(0, 300))}` };
  }
  const responses = parseResponses(received.bytes, exchange.methods);
  const problems = responses.map((r) => problemWith({ status: r.status, body: r.complete && !r.bodyless ? r.body : undefined }));
  return { statuses: responses.map((r) => r.status), problem: problems.find((p) => p !== undefined) };
}
