/**
 * The sandbox thread: answers the host's requests one at a time, in order.
 * A user function can stall this thread (until its deadline) but never the
 * host's event loop.
 */
import { parentPort, workerData } from "node:worker_threads";
import { EngineHost } from "./engine-host.js";
import type { SandboxReady, SandboxReply, SandboxRequest } from "./messages.js";
import { quickJsGuests } from "./quickjs-engine.js";

const port = parentPort;
if (port === null) throw new Error("sandbox-worker must run in a worker thread");

const { stackBytes } = workerData as { stackBytes: number };
const host = new EngineHost(quickJsGuests(stackBytes));
// Requests wait for the engine; the host's watchdog starts counting once we say we are ready.
let queue: Promise<void> = host.start().then(() => port.postMessage({ ready: true } satisfies SandboxReady));

const answer = async (request: SandboxRequest): Promise<void> => {
  const reply: SandboxReply = await host.handle(request).catch((error: unknown) => ({ id: request.id, ok: false, error: String(error) }));
  if (request.type === "drop") return;
  try {
    port.postMessage(reply);
  } catch (error) {
    port.postMessage({ id: request.id, ok: false, error: `the reply could not be sent: ${String(error)}` });
  }
};

port.on("message", (request: SandboxRequest) => {
  queue = queue.then(() => answer(request));
});
