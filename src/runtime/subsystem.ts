/**
 * A subsystem of the daemon (smoosh today; the db updates feed, ken and
 * hastings later): it is started and stopped with the daemon, hears every
 * store event, may serve HTTP routes and reports status and metrics.
 */
import type { RouteHandler } from "../http/types.js";
import type { StoreEvent } from "../ports/events.js";

export interface Subsystem {
  /** Key of its entry in status and metrics (`smoosh`, `db_updates`, ...). */
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Must not throw; the fan-out guards anyway so one subsystem cannot starve the others. */
  handleStoreEvent(event: StoreEvent): void;
  readonly routes: readonly RouteHandler[];
  status(): unknown;
  metrics(): unknown;
}
