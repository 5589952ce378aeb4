/**
 * upholster's version, read once from package.json (one level up from both
 * `src/` and `dist/`). A missing or odd file gives "0.0.0"
 * rather than a crash at import.
 */
import { readFileSync } from "node:fs";
import * as t from "io-ts";

const PackageJson = t.type({ version: t.string });

const readVersion = (): string => {
  try {
    const raw: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    return PackageJson.is(raw) ? raw.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
};

export const UPHOLSTER_VERSION: string = readVersion();
