/**
 * upholster's routes as the fuzzer knows them (README, "The HTTP API"):
 * where requests are aimed, and the model a 2xx answer is checked against
 * (a success for a path that names no route means a path was misread).
 */
export const NODE_NAME = "upholster@127.0.0.1";

export interface KnownRoute {
  /** The path under the server root (or under a node prefix, for smoosh paths). */
  readonly path: string;
  readonly methods: readonly string[];
  /** Also served under `/_node/_local` and `/_node/{node_name}`. */
  readonly underNode?: true;
  /** What its POST reads (bodies.ts). */
  readonly body?: BodyKind;
  /** `/_db_updates`: its feed parameters (paths.ts). */
  readonly feedQuery?: true;
}

export type BodyKind = "enqueue" | "enqueue_all" | "login";

export const KNOWN_ROUTES: readonly KnownRoute[] = [
  { path: "/", methods: ["GET"] },
  { path: "/_up", methods: ["GET"] },
  { path: "/_session", methods: ["GET", "HEAD", "POST", "DELETE"], body: "login" },
  { path: "/_upholster/status", methods: ["GET"] },
  { path: "/_upholster/metrics", methods: ["GET"] },
  { path: "/_node/_local", methods: ["GET"] },
  { path: "/_db_updates", methods: ["GET", "HEAD"], feedQuery: true },
  { path: "/_smoosh/status", methods: ["GET"], underNode: true },
  { path: "/_smoosh/suspend", methods: ["POST"], underNode: true },
  { path: "/_smoosh/resume", methods: ["POST"], underNode: true },
  { path: "/_smoosh/flush", methods: ["POST"], underNode: true },
  { path: "/_smoosh/enqueue", methods: ["POST"], underNode: true, body: "enqueue" },
  { path: "/_smoosh/enqueue_all", methods: ["POST"], underNode: true, body: "enqueue_all" },
];

export const NODE_PREFIXES = ["", "/_node/_local", `/_node/${NODE_NAME}`, "/_node/upholster%40127.0.0.1", "/_node/couchdb@127.0.0.1"];

const SMOOSH_PATH = /^\/_smoosh\/(status|suspend|resume|flush|enqueue|enqueue_all)\/?$/;
const PLAIN_PATHS = new Set(KNOWN_ROUTES.filter((r) => r.underNode !== true).map((r) => r.path));

/** The node a `/_node/{node}` prefix names, decoded as the server decodes it; undefined when it is not this node. */
const thisNode = (segment: string): boolean => {
  let node = segment;
  try {
    node = decodeURIComponent(segment);
  } catch {
    // The server keeps an undecodable segment as is.
  }
  return node === "_local" || node === NODE_NAME;
};

/**
 * A target's path and query as any reader of paths sees them: dot segments
 * resolved, as URL parsers do, and runs of slashes one, as CouchDB reads paths.
 */
export function readTarget(target: string): URL {
  const url = new URL(`http://upholster${target}`);
  url.pathname = url.pathname.replace(/\/{2,}/g, "/");
  return url;
}

/**
 * Whether a request target names a route that may answer 2xx. Beyond
 * `readTarget`, everything (percent-encoded letters, case, a trailing slash
 * but on smoosh paths) must match literally.
 */
export function namesARoute(target: string): boolean {
  const pathname = readTarget(target).pathname;
  if (PLAIN_PATHS.has(pathname) || SMOOSH_PATH.test(pathname)) return true;
  const node = /^\/_node\/([^/]+)(\/.*)?$/.exec(pathname);
  if (node === null || !thisNode(node[1] ?? "")) return false;
  return node[2] === undefined || SMOOSH_PATH.test(node[2]);
}
