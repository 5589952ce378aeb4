/**
 * TLS with a private CA, for real: openssl makes a CA and a server certificate
 * for 127.0.0.1, a loopback https server answers with a recorded CouchDB
 * exchange, and the adapter connects only when given the CA.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { exchange } from "../../support/fixtures.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";

let dir: string;
let server: Server;
let url: string;
let ca: string;

const openssl = (...args: string[]): void => {
  execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "upholster-tls-"));
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=upholster test CA");
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "san.ext");
  ca = readFileSync(join(dir, "ca.pem"), "utf8");
  const dbInfo = exchange("24").response.body;
  server = createServer({ key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) }, (req, res) => {
    const ok = req.url === "/couch/fx_db" && req.headers.authorization === `Basic ${Buffer.from("admin:s3cret").toString("base64")}`;
    res.writeHead(ok ? 200 : 404, { "Content-Type": "application/json" });
    res.end(JSON.stringify(ok ? dbInfo : { error: "not_found", reason: "missing" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `https://admin:s3cret@127.0.0.1:${(server.address() as AddressInfo).port}/couch`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe("TLS with a custom CA", () => {
  it("connects to an https server whose certificate is signed by the given CA, keeping the path prefix", async () => {
    const handle = createCouchStore({ url, ca, logger: createRecordingLogger(), state: createMemoryStatePort(), retry: { retries: 0 } });
    try {
      const info = await handle.store.dbInfo("fx_db");
      expect(info?.fileBytes).toBe((exchange("24").response.body as { sizes: { file: number } }).sizes.file);
    } finally {
      await handle.close();
    }
  });

  it("refuses the same server without the CA, and the error carries no password", async () => {
    const logger = createRecordingLogger();
    const handle = createCouchStore({ url, logger, state: createMemoryStatePort(), retry: { retries: 0 } });
    try {
      const error = await handle.store.dbInfo("fx_db").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).not.toContain("s3cret");
      expect(logger.text()).not.toContain("s3cret");
    } finally {
      await handle.close();
    }
  });
});
