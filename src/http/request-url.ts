const BASE = "http://localhost";

/**
 * The URL of a request as the routes see it. An origin-form target
 * (`/a/b?q`, what clients send) is parsed as a path: handed to
 * `new URL(target, base)` as a relative reference, `//_db_updates` would be
 * a network-path reference naming host `_db_updates` and path `/` (the fuzzer
 * got the welcome for it). Runs of slashes count as one, as CouchDB reads
 * paths (chttpd splits on `/` and drops empty parts), so `//_up` is `/_up`
 * there and here. An absolute-form target (`http://host/path`, which HTTP/1.1
 * servers must accept) keeps its path; anything else (`*`) is resolved
 * against the root. Undefined when it cannot be parsed at all.
 */
export function requestUrl(target: string): URL | undefined {
  try {
    const url = target.startsWith("/") ? new URL(`${BASE}${target}`) : new URL(target, BASE);
    url.pathname = url.pathname.replace(/\/{2,}/g, "/");
    return url;
  } catch {
    return undefined;
  }
}
