/** The real CouchDB of COUCHDB_URL (loopback only), for the suites that run against one when it is set. */

const raw = process.env.COUCHDB_URL;

/** COUCHDB_URL when it names a server on this machine; undefined otherwise (the live suites skip). */
export const liveCouchUrl: string | undefined =
  raw !== undefined && raw !== "" && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(new URL(raw).hostname) ? raw : undefined;

/** A plain request to that CouchDB (credentials moved to a header: fetch refuses them in the URL); the parsed JSON answer. */
export const couchRequest = async (method: string, path: string, body?: unknown): Promise<unknown> => {
  const url = new URL(liveCouchUrl ?? "");
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`;
  url.username = "";
  url.password = "";
  const res = await fetch(new URL(path, url), {
    method,
    headers: { authorization, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
};
