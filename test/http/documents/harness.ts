/**
 * upholster on the embedded store with CouchDB's document API, over real
 * HTTP on loopback, wired as `upholster run` wires it (src/cli/choose-store.ts):
 * the memory store's document API, its view engine when it has one, the
 * `[admins]` section for who is a server admin. Tests may give ids for
 * docs written without one.
 */
import nano from "nano";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { createMemoryDocumentApi } from "../../../src/adapters/memory/document-api.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createLocalAuthenticator } from "../../../src/http/auth/index.js";
import { documentsSubsystem, viewStoreOf } from "../../../src/runtime/documents/subsystem.js";
import { realScheduler } from "../../../src/runtime/scheduler.js";
import { createUpholster, type Upholster } from "../../../src/runtime/upholster.js";
import type { IniSections } from "../../../src/core/shared/ini.js";

export const ADMIN = { name: "admin", password: "password" } as const;
/** Few PBKDF2 iterations: every request checks the password. */
const INI: IniSections = { admins: { [ADMIN.name]: ADMIN.password }, chttpd_auth: { iterations: "10" } };

export interface DocumentsDaemon {
  readonly url: string;
  /** `http://admin:password@host:port`, for nano. */
  readonly adminUrl: string;
  readonly store: MemoryStore;
  readonly upholster: Upholster;
  /** nano as the admin. */
  readonly couch: nano.ServerScope;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  readonly newDocId?: () => string;
  readonly maxWaiters?: number;
}

export async function startDocumentsDaemon(options: DaemonOptions = {}): Promise<DocumentsDaemon> {
  const scheduler = realScheduler({ unref: true });
  const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
  const logger = createRecordingLogger();
  const documents = documentsSubsystem({
    api: createMemoryDocumentApi({ store, timers: scheduler, maxWaiters: options.maxWaiters }),
    views: viewStoreOf(store),
    clock: scheduler,
    newDocId: options.newDocId,
  });
  const authenticator = await createLocalAuthenticator({ config: INI, clock: scheduler });
  const upholster = createUpholster({
    store,
    events: store.createEventSource(),
    scheduler,
    logger,
    config: INI,
    http: { port: 0, authenticator },
    subsystems: [documents],
  });
  await upholster.start();
  const url = upholster.httpAddress()!.url;
  const adminUrl = url.replace("http://", `http://${ADMIN.name}:${ADMIN.password}@`);
  const stop = async (): Promise<void> => {
    await upholster.stop();
    store.close();
  };
  return { url, adminUrl, store, upholster, couch: nano(adminUrl), stop };
}

export const basicAuth = (name: string, password: string): Record<string, string> => ({
  Authorization: `Basic ${Buffer.from(`${name}:${password}`).toString("base64")}`,
});

export const ADMIN_AUTH = basicAuth(ADMIN.name, ADMIN.password);

/** `fetch` as the admin, JSON in and out. */
export async function request(
  daemon: Pick<DocumentsDaemon, "url">,
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly rawBody?: string; readonly headers?: Record<string, string>; readonly anonymous?: boolean } = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const headers: Record<string, string> = { Accept: "application/json", ...(options.anonymous === true ? {} : ADMIN_AUTH), ...(options.headers ?? {}) };
  const hasBody = options.body !== undefined || options.rawBody !== undefined;
  if (hasBody) headers["Content-Type"] = "application/json";
  const response = await fetch(`${daemon.url}${path}`, {
    method,
    headers,
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text === "" ? null : (JSON.parse(text) as unknown);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
