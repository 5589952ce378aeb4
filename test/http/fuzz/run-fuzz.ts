/**
 * Sends a run's exchanges to one daemon with bounded concurrency; collects
 * what went wrong (each with its index and exchange) and how often each
 * status came back (to see the run reached past the guard and the parsers).
 */
import type { Agent } from "undici";
import type { FuzzExchange } from "./exchanges.js";
import type { Outcome } from "./oracle.js";
import { mapWithConcurrency } from "./pool.js";
import { sendClient } from "./send-client.js";
import { sendRaw } from "./send-raw.js";

export interface Finding {
  readonly index: number;
  readonly problem: string;
  readonly exchange: FuzzExchange;
}

export interface Target {
  readonly url: string;
  readonly port: number;
  readonly agent: Agent;
}

export interface RunResult {
  readonly findings: readonly Finding[];
  /** Status -> how many answers had it. */
  readonly statuses: ReadonlyMap<number, number>;
}

export const sendOne = (target: Target, exchange: FuzzExchange): Promise<Outcome> =>
  exchange.kind === "client" ? sendClient(target.agent, target.url, exchange) : sendRaw(target.port, exchange);

export async function runFuzz(target: Target, indices: readonly number[], exchangeOf: (index: number) => FuzzExchange, concurrency: number): Promise<RunResult> {
  const findings: Finding[] = [];
  const statuses = new Map<number, number>();
  await mapWithConcurrency(indices, concurrency, async (index) => {
    const exchange = exchangeOf(index);
    const outcome = await sendOne(target, exchange);
    for (const status of outcome.statuses) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (outcome.problem !== undefined) findings.push({ index, problem: outcome.problem, exchange });
  });
  findings.sort((a, b) => a.index - b.index);
  return { findings, statuses };
}
