/**
 * What upholster knows of the server's dbs, as far as its feed has said:
 * each live db with the seq mark its feed rows cover, and the dbs whose
 * liveness is uncertain. The reconciler compares this with the server.
 *
 * The one rule that makes reconciliation lossless: this knowledge never says
 * more than the feed db holds. So it changes only after the feed wrote
 * something (`written`, and the reconciler's `record` after its page's
 * events were written), and before a `created`/`deleted` row is written the db
 * is marked uncertain and that mark is saved first (`beforeWrite`): if
 * upholster dies between the row and the next checkpoint, the db comes back
 * uncertain and the next pass states it again (a repeat, never a loss).
 *
 * Persisted through the StatePort in 64 shards by name hash (a checkpoint
 * rewrites only the shards that changed) plus one small key with the pass
 * cursor and the uncertain dbs; checkpoints save the shards first, then that
 * key, so the saved cursor never runs ahead of the saved knowledge.
 * Bounded: at most `maxDbs` dbs (beyond, new ones are counted as untracked).
 */
import { isLeft } from "fp-ts/lib/Either.js";
import {
  compareDbNames,
  freshPass,
  indexAfter,
  KNOWN_SHARD_COUNT,
  KnownShard,
  knownShardKey,
  knownShardOf,
  parseKey,
  passFromJson,
  passToJson,
  RECONCILE_STATE_KEY,
  ReconcileState,
  SEQ_NEVER_WRITTEN,
  type EventKey,
  type KnownDb,
  type PassState,
  type SeqMark,
} from "../../core/db-updates/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { Logger, StatePort } from "../../ports/shell.js";

export interface KnownDbsOptions {
  readonly state: StatePort;
  readonly logger: Logger;
  readonly maxDbs: number;
  /** Something changed that the next checkpoint should save. */
  readonly onDirty?: (() => void) | undefined;
  /** One write had both a created and a deleted row for `db`: the feed's order of the two may be wrong. */
  readonly onAmbiguous?: ((db: string) => void) | undefined;
}

/** What a checkpoint found: the saved pass is the one given, or nothing was saved (it retries later). */
export type CheckpointResult = "saved" | "failed";

export class KnownDbs {
  private readonly shards: Map<string, SeqMark>[] = Array.from({ length: KNOWN_SHARD_COUNT }, () => new Map());
  private readonly uncertain = new Set<string>();
  /** The uncertain list as saved: a db leaves it only once a checkpoint saved its settled state. */
  private readonly savedUncertain = new Set<string>();
  /** Every db known (live or uncertain), in `_all_dbs` order: pages are ranges of it. */
  private sorted: string[] = [];
  private readonly dirty = new Set<number>();
  private savedPass: PassState = freshPass();
  private checkpointing: Promise<CheckpointResult> | undefined;
  /** Dbs that could not be remembered (the bound). */
  untracked = 0;
  private untrackedLogged = false;

  constructor(private readonly o: KnownDbsOptions) {}

  /** Loads what was saved; the pass is undefined when nothing was (a first start). */
  async load(): Promise<PassState | undefined> {
    const shardValues = await Promise.all(Array.from({ length: KNOWN_SHARD_COUNT }, (_, i) => this.loadKey(knownShardKey(i))));
    shardValues.forEach((raw, i) => {
      if (raw === undefined) return;
      const decoded = KnownShard.decode(raw);
      if (isLeft(decoded)) return this.o.logger.warn({ key: knownShardKey(i) }, "db updates: ignoring a saved knowledge shard that does not decode");
      const shard = this.shards[i] as Map<string, SeqMark>;
      for (const [db, mark] of Object.entries(decoded.right)) shard.set(db, mark);
    });
    const raw = await this.loadKey(RECONCILE_STATE_KEY);
    const decoded = raw === undefined ? undefined : ReconcileState.decode(raw);
    if (decoded !== undefined && isLeft(decoded)) this.o.logger.warn({ key: RECONCILE_STATE_KEY }, "db updates: ignoring saved reconcile state that does not decode");
    const saved = decoded === undefined || isLeft(decoded) ? undefined : decoded.right;
    for (const db of saved?.uncertain ?? []) {
      this.uncertain.add(db);
      this.savedUncertain.add(db);
    }
    this.sorted = [...new Set([...this.shards.flatMap((s) => [...s.keys()]), ...this.uncertain])].sort(compareDbNames);
    if (saved === undefined) return undefined;
    this.savedPass = passFromJson(saved.pass);
    return this.savedPass;
  }

  get size(): number {
    return this.sorted.length;
  }

  get(db: string): KnownDb | undefined {
    const seq = this.shardOf(db).get(db);
    const uncertain = this.uncertain.has(db);
    return seq === undefined && !uncertain ? undefined : { seq, uncertain };
  }

  /** Every known db after `after` (undefined: from the first) through `through` (undefined: to the last). */
  range(after: string | undefined, through: string | undefined): Map<string, KnownDb> {
    const from = after === undefined ? 0 : indexAfter(this.sorted, after);
    const to = through === undefined ? this.sorted.length : indexAfter(this.sorted, through);
    const out = new Map<string, KnownDb>();
    for (const db of this.sorted.slice(from, to)) {
      const known = this.get(db);
      if (known !== undefined) out.set(db, known);
    }
    return out;
  }

  // --- the feed's write journal ------------------------------------------------------------

  /** Before the feed writes these keys: dbs getting a created/deleted row become uncertain, saved first. */
  async beforeWrite(keys: readonly string[]): Promise<void> {
    const dbs = [...new Set(this.liveness(keys).map((k) => k.db))].filter((db) => !this.savedUncertain.has(db));
    if (dbs.length === 0) return;
    for (const db of dbs) {
      if (!this.roomFor(db)) continue;
      this.uncertain.add(db);
      this.savedUncertain.add(db);
      this.index(db);
    }
    await this.saveReconcileState();
  }

  /** The feed wrote these keys: its clients now see these dbs created or deleted. */
  written(keys: readonly string[]): void {
    const events = this.liveness(keys);
    const both = new Set(events.filter((e) => e.type === "created").map((e) => e.db).filter((db) => events.some((e) => e.type === "deleted" && e.db === db)));
    for (const { type, db } of events) {
      // Created and deleted in one write: the feed's order of the two rows is not the order they happened in.
      if (both.has(db)) this.uncertain.add(db);
      else {
        this.uncertain.delete(db);
        if (type === "created") this.setSeq(db, SEQ_NEVER_WRITTEN);
        else this.removeSeq(db);
      }
      this.unindexIfGone(db);
    }
    for (const db of both) this.o.onAmbiguous?.(db);
    // The saved uncertain list can shrink now: a checkpoint is due even if no shard changed.
    if (events.length > 0) this.o.onDirty?.();
  }

  /**
   * After a page's events were written: `db` is live at `mark`. Applied to a
   * db the feed shows live (not uncertain); to an unknown db only when adopted
   * silently (a baseline). Never resurrects a db the feed has since deleted.
   */
  record(db: string, mark: SeqMark, adopt: boolean): void {
    if (this.uncertain.has(db)) return;
    const shard = this.shardOf(db);
    if (shard.has(db)) {
      if (shard.get(db) !== mark) this.setSeq(db, mark);
    } else if (adopt && this.roomFor(db)) {
      this.setSeq(db, mark);
    }
  }

  /** Dbs left out because of the bound: counted and logged once. */
  noteUntracked(count: number): void {
    if (count <= 0) return;
    this.untracked += count;
    if (this.untrackedLogged) return;
    this.untrackedLogged = true;
    this.o.logger.warn({ maxDbs: this.o.maxDbs }, "db updates: reconcile_max_dbs reached; dbs beyond it are not reconciled");
  }

  // --- checkpoints --------------------------------------------------------------------------

  isDirty(): boolean {
    return this.dirty.size > 0 || [...this.savedUncertain].some((db) => !this.uncertain.has(db));
  }

  /** Saves the changed shards, then the pass and the uncertain list as of the same moment. One at a time. */
  async checkpoint(pass: PassState): Promise<CheckpointResult> {
    while (this.checkpointing !== undefined) await this.checkpointing;
    this.checkpointing = this.saveCheckpoint(pass).finally(() => (this.checkpointing = undefined));
    return this.checkpointing;
  }

  private async saveCheckpoint(pass: PassState): Promise<CheckpointResult> {
    const shards = [...this.dirty];
    this.dirty.clear();
    const snapshots = shards.map((i) => [i, Object.fromEntries(this.shards[i] as Map<string, SeqMark>)] as const);
    const settled = [...this.savedUncertain].filter((db) => !this.uncertain.has(db));
    try {
      await Promise.all(snapshots.map(([i, value]) => this.o.state.save(knownShardKey(i), value)));
    } catch (e) {
      for (const i of shards) this.dirty.add(i);
      this.o.logger.warn({ error: errorText(e) }, "db updates: could not save what upholster knows of the dbs; will retry");
      return "failed";
    }
    for (const db of settled) this.savedUncertain.delete(db);
    this.savedPass = pass;
    return (await this.saveReconcileState()) ? "saved" : "failed";
  }

  private async saveReconcileState(): Promise<boolean> {
    const value: ReconcileState = { pass: passToJson(this.savedPass), uncertain: [...this.savedUncertain] };
    try {
      await this.o.state.save(RECONCILE_STATE_KEY, value);
      return true;
    } catch (e) {
      this.o.logger.warn({ error: errorText(e) }, "db updates: could not save the reconcile state; will retry");
      return false;
    }
  }

  // --- internals ----------------------------------------------------------------------------

  private async loadKey(key: string): Promise<unknown> {
    try {
      return await this.o.state.load(key);
    } catch (e) {
      this.o.logger.warn({ key, error: errorText(e) }, "db updates: could not load saved reconcile state");
      return undefined;
    }
  }

  private liveness(keys: readonly string[]): EventKey[] {
    const out: EventKey[] = [];
    for (const id of keys) {
      const key = parseKey(id);
      if (isLeft(key) || key.right.account !== undefined || key.right.type === "updated") continue;
      out.push(key.right);
    }
    return out;
  }

  private shardOf(db: string): Map<string, SeqMark> {
    return this.shards[knownShardOf(db)] as Map<string, SeqMark>;
  }

  private has(db: string): boolean {
    return this.shardOf(db).has(db) || this.uncertain.has(db);
  }

  private roomFor(db: string): boolean {
    if (this.has(db) || this.sorted.length < this.o.maxDbs) return true;
    this.noteUntracked(1);
    return false;
  }

  private setSeq(db: string, mark: SeqMark): void {
    if (!this.has(db) && !this.roomFor(db)) return;
    this.shardOf(db).set(db, mark);
    this.index(db);
    this.touch(db);
  }

  private removeSeq(db: string): void {
    if (this.shardOf(db).delete(db)) this.touch(db);
  }

  private touch(db: string): void {
    this.dirty.add(knownShardOf(db));
    this.o.onDirty?.();
  }

  private index(db: string): void {
    const at = indexAfter(this.sorted, db);
    if (this.sorted[at - 1] !== db) this.sorted.splice(at, 0, db);
  }

  private unindexIfGone(db: string): void {
    if (this.has(db)) return;
    const at = indexAfter(this.sorted, db) - 1;
    if (this.sorted[at] === db) this.sorted.splice(at, 1);
  }
}
