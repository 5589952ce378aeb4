/**
 * CouchDB's node paths: `/_node/{node}/...` names a node of the cluster;
 * `_local` is the node that answers. upholster is one node, named by
 * `[upholster] node_name`: `/_node/_local/...` and `/_node/{node_name}/...`
 * are the same, any other node is CouchDB's 404 `no such node` (after the
 * admin check, as CouchDB authorizes `/_node/*` before it looks the node up).
 */
import { ADMIN_ONLY } from "./auth/access.js";
import { sendError, sendJson } from "./respond.js";
import { routeTable } from "./router.js";
import type { RouteHandler } from "./types.js";

export const LOCAL_NODE = "_local";

/** `/_node/{node_name}/x` -> `/_node/_local/x`, so routes are written once for `_local`; other paths unchanged. */
export function canonicalNodePath(pathname: string, nodeName: string): string {
  const match = /^\/_node\/([^/]+)(\/.*)?$/.exec(pathname);
  if (match === null) return pathname;
  const node = safeDecode(match[1] ?? "");
  return node === nodeName ? `/_node/${LOCAL_NODE}${match[2] ?? ""}` : pathname;
}

export function nodeRoutes(nodeName: string): RouteHandler {
  return routeTable([
    // CouchDB: `GET /_node/_local` -> `{"name":"couchdb@127.0.0.1"}` (fixture 05).
    { path: /^\/_node\/_local$/, access: ADMIN_ONLY, methods: { GET: ({ res }) => sendJson(res, 200, { name: nodeName }) } },
    {
      path: /^\/_node\/(?!_local(?:\/|$))([^/]+)(?:\/.*)?$/,
      access: ADMIN_ONLY,
      methods: Object.fromEntries(
        (["GET", "POST", "PUT", "DELETE", "HEAD"] as const).map((method) => [
          method,
          ({ res, params }) => sendError(res, 404, "not_found", `no such node: ${params[0] ?? ""}`),
        ]),
      ),
    },
  ]);
}

const safeDecode = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};
