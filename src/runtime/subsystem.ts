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
  /**
   * Mounted on upholster's server after the server-level routes. Each route
   * declares who may call it (`access` in a `routeTable`: admin, status, db
   * reader, public) and the server's one guard enforces it.
   */
  readonly routes: readonly RouteHandler[];
  status(): unknown;
  metrics(): unknown;
}
