/**
 * Deploys survive restarts: the core's `persist` effect saves the records
 * through the state port; at start they are loaded, decoded (never
 * trusted: a bad file is logged and ignored) and handed back to the core.
 * Saves are serialized, the latest wins.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { DeployRecordC, type DeployRecord } from "../../core/indexing/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { Logger, StatePort } from "../../ports/shell.js";
import type { InFlight } from "../in-flight.js";

export const DEPLOYS_STATE_KEY = "indexing-deploys";

const DeploysC = t.array(DeployRecordC);

export interface DeployPersistence {
  load(): Promise<readonly DeployRecord[]>;
  save(records: readonly DeployRecord[]): void;
}

export function createDeployPersistence(state: StatePort, inFlight: InFlight, logger: Logger): DeployPersistence {
  let chain: Promise<void> = Promise.resolve();
  return {
    async load() {
      try {
        const raw = await state.load(DEPLOYS_STATE_KEY);
        if (raw === undefined) return [];
        const decoded = DeploysC.decode(raw);
        if (isLeft(decoded)) {
          logger.warn({ key: DEPLOYS_STATE_KEY }, "ken: saved deploys do not decode; ignored");
          return [];
        }
        return decoded.right;
      } catch (error) {
        logger.warn({ err: errorText(error) }, "ken: saved deploys could not be read; ignored");
        return [];
      }
    },
    save(records) {
      chain = chain.then(() =>
        state.save(DEPLOYS_STATE_KEY, records).catch((error: unknown) => logger.warn({ err: errorText(error) }, "ken: deploys could not be saved")),
      );
      inFlight.track(chain);
    },
  };
}
