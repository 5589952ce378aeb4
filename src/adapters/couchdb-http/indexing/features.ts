/**
 * What the server can index besides views, from `GET /`'s `features`
 * (CouchDB 3 lists `search` when dreyfus has a Clouseau to talk to, and
 * `nouveau` when nouveau is enabled; 3.4.3 here lists neither). Asked once;
 * a failure is not remembered (the server may be down now).
 */
import * as t from "io-ts";
import type { CouchClient } from "../client.js";
import { decodeBody } from "../decoders.js";

const Welcome = t.partial({ features: t.array(t.string), couchdb: t.string, version: t.string });

export type CouchHttp = Pick<CouchClient, "call">;

export interface FeatureProbe {
  features(): Promise<ReadonlySet<string>>;
}

export function createFeatureProbe(http: CouchHttp): FeatureProbe {
  let asked: Promise<ReadonlySet<string>> | undefined;
  return {
    features() {
      asked ??= http
        .call({ method: "GET", path: "/" })
        .then((res) => new Set(decodeBody(Welcome, res.body, "GET /").features ?? []))
        .catch((error: unknown) => {
          asked = undefined;
          throw error;
        });
      return asked;
    },
  };
}
