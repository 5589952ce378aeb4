/**
 * Server-level endpoints: the welcome (`GET /`), the health check
 * (`GET /_up`, as CouchDB; both open to anyone), and upholster's own status
 * and metrics (read-only status: admins, unless `public_status`).
 */
import { UPHOLSTER_VERSION } from "../version.js";
import { PUBLIC, STATUS } from "./auth/access.js";
import { sendJson } from "./respond.js";
import { routeTable } from "./router.js";
import type { RouteHandler } from "./types.js";

export interface ServerInfo {
  /** False while starting or stopping: `/_up` answers 404 like CouchDB in maintenance mode. */
  isUp(): boolean;
  /** `GET /_upholster/status`: subsystems, event source mode, ... (any JSON). */
  status(): unknown;
  /** `GET /_upholster/metrics`: counters (any JSON). */
  metrics(): unknown;
}

export function serverRoutes(info: ServerInfo): RouteHandler {
  return routeTable([
    {
      path: /^\/$/,
      access: PUBLIC,
      methods: { GET: ({ res }) => sendJson(res, 200, { upholster: "Welcome", version: UPHOLSTER_VERSION }) },
    },
    {
      path: /^\/_up$/,
      access: PUBLIC,
      methods: {
        GET: ({ res }) =>
          info.isUp() ? sendJson(res, 200, { status: "ok" }) : sendJson(res, 404, { status: "maintenance_mode" }),
      },
    },
    { path: /^\/_upholster\/status$/, access: STATUS, methods: { GET: ({ res }) => sendJson(res, 200, info.status()) } },
    { path: /^\/_upholster\/metrics$/, access: STATUS, methods: { GET: ({ res }) => sendJson(res, 200, info.metrics()) } },
  ]);
}
