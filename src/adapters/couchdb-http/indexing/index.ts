/**
 * The index backends of a CouchDB server (or PouchDB Server): views, and
 * dreyfus search and nouveau where the server has them.
 *
 *   createCouchIndexBackends({ url, ... }) -> { backends, stats, close }
 *
 * They have their own HTTP client (same URL, credentials and CA as the
 * store's), so their requests are counted apart from compaction's and their
 * timeout suits a search query that waits for its index.
 */
import type { IndexBackend } from "../../../ports/index-backend.js";
import type { Logger, Scheduler } from "../../../ports/shell.js";
import { CouchClient, type CouchAuth, type RetryOptions } from "../client.js";
import { realScheduler } from "../timers.js";
import { createFeatureProbe } from "./features.js";
import { couchFullTextBackend, DREYFUS, NOUVEAU } from "./search.js";
import { couchViewsBackend, type PollSettings } from "./views.js";

export { couchViewsBackend, type PollSettings } from "./views.js";
export { couchFullTextBackend, DREYFUS, NOUVEAU, type FullTextFlavour } from "./search.js";

export interface CouchIndexBackendsOptions {
  readonly url: string;
  readonly auth?: CouchAuth | undefined;
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined;
  readonly logger: Logger;
  readonly scheduler?: Scheduler | undefined;
  /** Per request; a search build is one query that waits for its index. Default 120 000 ms. */
  readonly requestTimeoutMs?: number | undefined;
  readonly retry?: Partial<RetryOptions> | undefined;
  /** How a view build is followed: `_info` every `minMs`, doubling to `maxMs`. Default 100 to 2 000 ms. */
  readonly poll?: PollSettings | undefined;
}

export interface CouchIndexBackends {
  readonly backends: readonly IndexBackend[];
  stats(): { readonly requests: number; readonly retries: number };
  close(): Promise<void>;
}

export function createCouchIndexBackends(options: CouchIndexBackendsOptions): CouchIndexBackends {
  const scheduler = options.scheduler ?? realScheduler;
  const logger = options.logger;
  const client = new CouchClient({
    url: options.url,
    auth: options.auth,
    ca: options.ca,
    logger,
    scheduler,
    requestTimeoutMs: options.requestTimeoutMs ?? 120_000,
    retry: options.retry,
  });
  const features = createFeatureProbe(client);
  const backends = [
    couchViewsBackend({ http: client, scheduler, logger, poll: options.poll ?? { minMs: 100, maxMs: 2_000 } }),
    couchFullTextBackend(DREYFUS, { http: client, features, logger }),
    couchFullTextBackend(NOUVEAU, { http: client, features, logger }),
  ];
  return {
    backends,
    stats: () => ({ requests: client.stats.requests, retries: client.stats.retries }),
    close: () => client.close(),
  };
}
