/**
 * bench:queue — the channel queue (src/core/compaction/queue.ts) against the
 * seed's own Erlang queue (`smoosh_priority_queue`), and against a plain
 * sorted array, all doing the same sequence of operations:
 *
 *   x0 = 42, x' = (1103515245 x + 12345) mod 2^31; operation i (0-based)
 *   advances x, then: if i mod 3 = 2, `out`; otherwise `in` key
 *   "db" + (x mod 50000), priority (x mod 100000) / 10, capacity 9999, time i.
 *
 * 1,000,000 operations (OPS below; `QUEUE_BENCH_OPS` overrides). Each side
 * builds the operations first, then times only the queue; each side runs the
 * sequence REPS times (5; `QUEUE_BENCH_REPS` overrides) and reports its best
 * (the machine is shared: the best run is the one least disturbed). Both sides print a checksum of what `out`
 * returned (how many items and the sum of priority x 10), which must agree.
 * In this sequence the priority determines the key (both come from
 * x mod 100000), so no two queued items ever have equal priorities and the
 * seed's LIFO tie rule never differs from upholster's FIFO one.
 *
 * The Erlang side: `smoosh_priority_queue.erl` is cut out of the seed text
 * (a git-email dump; the module is a `+` diff), written with a small driver
 * to a temporary directory, compiled with `erlc` and run with `erl -noshell`,
 * timed inside Erlang with timer:tc. Keys are binaries, as CouchDB's db names
 * are. The seed's in/5 takes no time: it keys its tree on {Priority, now()}
 * itself, so the driver calls `in(Key, Priority, Priority, 9999, Q)` (the
 * value is the priority, as smoosh_channel passes it) and the seed's clock
 * plays the part of "time i". Without `erl`/`erlc` on PATH (Debian:
 * erlang-nox) or without the seed text, that row is skipped and says why.
 *
 * The plain sorted array is destructive: each op overwrites the previous
 * queue. The reducer needs the old state to stay valid (pure steps, replay),
 * so a second baseline pays for that the simple way, copying the array and its
 * index on every op (run on the first 20,000 ops only: it is slow).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { emptyQueue, queueIn, queueOut, queueSize, type PriorityQueue } from "../src/core/compaction/queue.js";

const OPS = Number(process.env.QUEUE_BENCH_OPS ?? 1_000_000);
const REPS = Number(process.env.QUEUE_BENCH_REPS ?? 5);
const CAPACITY = 9999;
const SEED_TEXT = resolve(dirname(fileURLToPath(import.meta.url)), "../../shared/seeds/002_3b9e95d73dc6e6a1.txt");

/** The operations: `keys[i]` is "" for an `out`. */
interface Ops {
  keys: string[];
  priorities: number[];
}

const makeOps = (count: number): Ops => {
  const keys: string[] = new Array<string>(count);
  const priorities: number[] = new Array<number>(count);
  let x = 42;
  for (let i = 0; i < count; i++) {
    // (1103515245 x + 12345) mod 2^31, exactly: only the low 31 bits of the product matter.
    x = (Math.imul(1103515245, x) + 12345) & 0x7fffffff;
    keys[i] = i % 3 === 2 ? "" : `db${x % 50000}`;
    priorities[i] = i % 3 === 2 ? 0 : (x % 100000) / 10;
  }
  return { keys, priorities };
};

/** What `out` returned: how many items, and the sum of round(priority x 10). */
interface Checksum {
  outs: number;
  sum: number;
  size: number;
}
const showChecksum = (c: Checksum): string => `${c.outs} outs, sum ${c.sum}, final size ${c.size}`;

interface Timed {
  seconds: number;
  check: Checksum;
}

/** Run `run` `reps` times; the best time, and the checksum (the same every time). */
const best = (reps: number, run: () => Checksum): Timed => {
  let seconds = Infinity;
  let check: Checksum = { outs: 0, sum: 0, size: 0 };
  for (let r = 0; r < reps; r++) {
    const started = process.hrtime.bigint();
    check = run();
    seconds = Math.min(seconds, Number(process.hrtime.bigint() - started) / 1e9);
  }
  return { seconds, check };
};

const runUpholster = (ops: Ops, count: number): Checksum => {
  let q: PriorityQueue<number> = emptyQueue();
  let outs = 0;
  let sum = 0;
  for (let i = 0; i < count; i++) {
    if (i % 3 === 2) {
      const r = queueOut(q);
      if (r !== undefined) {
        q = r.queue;
        outs++;
        sum += Math.round(r.priority * 10);
      }
    } else {
      const priority = ops.priorities[i]!;
      q = queueIn(q, ops.keys[i]!, priority, priority, i, CAPACITY).queue;
    }
  }
  return { outs, sum, size: queueSize(q) };
};

/** The baseline: entries sorted worst..best, a Map for key lookup, same tie rule (FIFO). */
class SortedArrayQueue {
  /** true: copy before every change, so the previous version stays intact (what a pure step needs). */
  constructor(private readonly copyOnWrite = false) {}

  private items: Array<{ key: string; priority: number; atMs: number; seq: number }> = [];
  private byKey = new Map<string, { priority: number; atMs: number; seq: number }>();

  private beforeChange(): void {
    if (!this.copyOnWrite) return;
    this.items = this.items.slice();
    this.byKey = new Map(this.byKey);
  }
  private seq = 0;

  // Worse first: lower priority, later time, higher seq.
  private static worse(a: { priority: number; atMs: number; seq: number }, b: { priority: number; atMs: number; seq: number }): boolean {
    if (a.priority !== b.priority) return a.priority < b.priority;
    if (a.atMs !== b.atMs) return a.atMs > b.atMs;
    return a.seq > b.seq;
  }

  private indexOf(e: { priority: number; atMs: number; seq: number }): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (SortedArrayQueue.worse(this.items[mid]!, e)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  in(key: string, priority: number, nowMs: number, capacity: number): void {
    this.beforeChange();
    const old = this.byKey.get(key);
    if (old !== undefined) {
      this.items.splice(this.indexOf(old), 1);
      this.byKey.delete(key);
    }
    const e = { key, priority, atMs: nowMs, seq: this.seq++ };
    this.items.splice(this.indexOf(e), 0, e);
    this.byKey.set(key, e);
    while (this.items.length > capacity) {
      const worst = this.items.shift();
      if (worst !== undefined) this.byKey.delete(worst.key);
    }
  }

  out(): { key: string; priority: number } | undefined {
    this.beforeChange();
    const best = this.items.pop();
    if (best !== undefined) this.byKey.delete(best.key);
    return best;
  }

  get size(): number {
    return this.items.length;
  }
}

const runSortedArray = (ops: Ops, count: number, copyOnWrite: boolean): Checksum => {
  const q = new SortedArrayQueue(copyOnWrite);
  let outs = 0;
  let sum = 0;
  for (let i = 0; i < count; i++) {
    if (i % 3 === 2) {
      const r = q.out();
      if (r !== undefined) {
        outs++;
        sum += Math.round(r.priority * 10);
      }
    } else q.in(ops.keys[i]!, ops.priorities[i]!, i, CAPACITY);
  }
  return { outs, sum, size: q.size };
};

/** `smoosh_priority_queue.erl` as the seed adds it: the `+` lines of its diff, without the `+`. */
const seedModule = (seedText: string): string | undefined => {
  const lines = seedText.split("\n");
  const start = lines.findIndex((line) => line === "+++ b/src/smoosh_priority_queue.erl");
  if (start < 0) return undefined;
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("diff --git ")) break;
    if (line.startsWith("+")) out.push(line.slice(1));
  }
  return out.some((line) => line.startsWith("-module(smoosh_priority_queue).")) ? `${out.join("\n")}\n` : undefined;
};

/**
 * The driver: builds the same operations as a tuple kept in persistent_term
 * (the literal area, which garbage collection never copies: a 1M-element list
 * on the measuring process's heap would be copied by every major GC, which
 * doubled the seed's time), then times REPS runs, each in a fresh process, with timer:tc.
 */
const DRIVER = `-module(queue_bench).
-export([main/1]).

ops(0, _X, _I, Acc) -> lists:reverse(Acc);
ops(N, X0, I, Acc) ->
    X = (1103515245 * X0 + 12345) band 16#7FFFFFFF,
    Op = case I rem 3 of
        2 -> out;
        _ -> {<<"db", (integer_to_binary(X rem 50000))/binary>>, (X rem 100000) / 10}
    end,
    ops(N - 1, X, I + 1, [Op | Acc]).

run(I, N, _Ops, Q, Outs, Sum) when I > N -> {Outs, Sum, smoosh_priority_queue:size(Q)};
run(I, N, Ops, Q, Outs, Sum) ->
    case element(I, Ops) of
        out ->
            case smoosh_priority_queue:out(Q) of
                false -> run(I + 1, N, Ops, Q, Outs, Sum);
                {_Key, Priority, Q1} -> run(I + 1, N, Ops, Q1, Outs + 1, Sum + round(Priority * 10))
            end;
        {Key, Priority} ->
            run(I + 1, N, Ops, smoosh_priority_queue:in(Key, Priority, Priority, ${CAPACITY}, Q), Outs, Sum)
    end.

main([Count, Reps]) ->
    N = list_to_integer(Count),
    persistent_term:put(queue_bench_ops, list_to_tuple(ops(N, 42, 0, []))),
    erlang:garbage_collect(),
    Parent = self(),
    lists:foreach(
        fun(_) ->
            spawn_link(fun() ->
                Ops = persistent_term:get(queue_bench_ops),
                Parent ! {done, timer:tc(fun() -> run(1, N, Ops, smoosh_priority_queue:new(), 0, 0) end)}
            end),
            receive
                {done, {Micros, {Outs, Sum, Size}}} -> io:format("run ~b ~b ~b ~b~n", [Micros, Outs, Sum, Size])
            end
        end,
        lists:seq(1, list_to_integer(Reps))).
`;

/** The seed's queue under Erlang, or why it could not run. */
const runErlang = (count: number, reps: number): { timed: Timed; release: string } | { skipped: string } => {
  if (!existsSync(SEED_TEXT)) return { skipped: `seed text not found at ${SEED_TEXT}` };
  const module = seedModule(readFileSync(SEED_TEXT, "utf8"));
  if (module === undefined) return { skipped: `no smoosh_priority_queue.erl in ${SEED_TEXT}` };
  const dir = mkdtempSync(join(tmpdir(), "upholster-bench-queue-"));
  try {
    writeFileSync(join(dir, "smoosh_priority_queue.erl"), module);
    writeFileSync(join(dir, "queue_bench.erl"), DRIVER);
    // The seed calls now/0, deprecated since OTP 18: the warning is expected.
    const compile = spawnSync("erlc", ["-o", dir, join(dir, "smoosh_priority_queue.erl"), join(dir, "queue_bench.erl")], { encoding: "utf8" });
    if (compile.error !== undefined) return { skipped: `erlc not runnable (${compile.error.message}); Debian: apt-get install erlang-nox erlang-dev` };
    if (compile.status !== 0) return { skipped: `erlc failed: ${compile.stderr || compile.stdout}` };
    const release = spawnSync("erl", ["-noshell", "-eval", 'io:format("~s", [erlang:system_info(otp_release)]), halt().'], { encoding: "utf8" });
    if (release.error !== undefined) return { skipped: `erl not runnable (${release.error.message}); Debian: apt-get install erlang-nox` };
    const run = spawnSync("erl", ["-noshell", "-pa", dir, "-run", "queue_bench", "main", String(count), String(reps), "-s", "init", "stop"], {
      encoding: "utf8",
      maxBuffer: 1 << 20,
    });
    const runs = run.stdout
      .split("\n")
      .filter((line) => line.startsWith("run "))
      .map((line) => line.split(" ").slice(1).map(Number));
    if (run.status !== 0 || runs.length !== reps) return { skipped: `erl failed (status ${run.status}): ${run.stderr || run.stdout}` };
    const [, outs = 0, sum = 0, size = 0] = runs[0]!;
    return {
      timed: { seconds: Math.min(...runs.map(([micros = Infinity]) => micros / 1e6)), check: { outs, sum, size } },
      release: release.stdout.trim(),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const row = (label: string, t: Timed, opCount: number): void => {
  const opsPerSec = Math.round(opCount / t.seconds).toLocaleString("en-US");
  console.log(`${label.padEnd(30)} ${opsPerSec.padStart(10)} ops/s  (${t.seconds.toFixed(2)} s, ${showChecksum(t.check)})`);
};

const ops = makeOps(OPS);
console.log(`${OPS.toLocaleString("en-US")} ops (LCG from 42: 2/3 in over 50,000 keys, 1/3 out), capacity ${CAPACITY}, best of ${REPS} runs each`);

const erlang = runErlang(OPS, REPS);
const upholster = best(REPS, () => runUpholster(ops, OPS));
row("upholster queue", upholster, OPS);
if ("timed" in erlang) row(`seed queue (Erlang/OTP ${erlang.release})`, erlang.timed, OPS);
else console.log(`seed queue (Erlang)            skipped: ${erlang.skipped}`);
const array = best(REPS, () => runSortedArray(ops, OPS, false));
row("sorted array (baseline)", array, OPS);
const COPY_OPS = Math.min(OPS, 20_000);
const copy = best(1, () => runSortedArray(ops, COPY_OPS, true));
row(`sorted array, copy per op`, copy, COPY_OPS);

const same = (a: Checksum, b: Checksum): boolean => a.outs === b.outs && a.sum === b.sum && a.size === b.size;
if (!same(upholster.check, array.check)) console.log("CHECKSUM MISMATCH: upholster and the sorted array disagree");
if ("timed" in erlang) {
  const agree = same(upholster.check, erlang.timed.check);
  console.log(`checksums: ${agree ? "upholster and the seed agree" : "MISMATCH between upholster and the seed"}`);
  const ratio = erlang.timed.seconds / upholster.seconds;
  console.log(`upholster vs seed (Erlang): ${ratio >= 1 ? `${ratio.toFixed(2)}x faster` : `${(1 / ratio).toFixed(2)}x slower`}`);
  if (!agree) process.exitCode = 1;
} else console.log("upholster vs seed (Erlang): not measured (the Erlang baseline was skipped, see above)");
const perSec = (t: Timed, n: number): number => n / t.seconds;
console.log(`ratio tree / destructive array: ${(perSec(upholster, OPS) / perSec(array, OPS)).toFixed(2)}x`);
console.log(`ratio tree / copy-per-op array (both keep old versions): ${(perSec(upholster, OPS) / perSec(copy, COPY_OPS)).toFixed(2)}x`);
