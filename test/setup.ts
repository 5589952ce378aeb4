/**
 * Property tests run with a fixed seed so CI is deterministic; a failure
 * prints the seed and counterexample path. Replay one with
 *   FC_SEED=<seed> npx vitest run <file>
 * or explore with a new seed: FC_SEED=$RANDOM npm test.
 */
import fc from "fast-check";

const seed = Number(process.env.FC_SEED ?? 20261121);
fc.configureGlobal({ seed, numRuns: Number(process.env.FC_RUNS ?? 200), verbose: 1 });
