/**
 * Counts the connections a server has open, seen from inside this process:
 * node publishes every accepted socket on the `net.server.socket`
 * diagnostics channel; those accepted on `port` are tracked until they close.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { Socket } from "node:net";

export interface SocketCount {
  open(): number;
  /** Accepted since counting began. */
  accepted(): number;
  stop(): void;
}

export function countServerSockets(port: number): SocketCount {
  const open = new Set<Socket>();
  let accepted = 0;
  const onSocket = (message: unknown): void => {
    const socket = (message as { socket: Socket }).socket;
    if (socket.localPort !== port) return;
    accepted += 1;
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  subscribe("net.server.socket", onSocket);
  return {
    open: () => open.size,
    accepted: () => accepted,
    stop: () => unsubscribe("net.server.socket", onSocket),
  };
}
