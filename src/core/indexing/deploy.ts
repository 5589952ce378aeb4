/**
 * Staged design doc deploys (CouchDB issues 4462, 1825). Changing a view of
 * a big db makes its queries wait for a full rebuild; CouchDB's documented
 * remedy is manual: save the new design doc under another id, wait for its
 * indexes, copy it over the live one (same signature: the built index is
 * reused). Automated:
 *
 *   staging         write the body at `<ddoc>.upholster-stage` (and read the live rev)
 *   building        the stage's indexes are built (prioritized, whatever their
 *                   autoupdate says), checked every `deploy_check_msec` and after
 *                   each of their builds, until each has reached the db's seq of
 *                   when the stage was written and is at most `deploy_max_lag`
 *                   behind the db now (a busy db is never exactly caught up)
 *   swapping        write the body over the live design doc, if it is still at
 *                   the rev read when staging (else: conflict, the deploy fails)
 *   removing-stage  delete the stage; then done (or failed, or cancelled)
 *
 * Every step is idempotent, and the records are persisted after each phase
 * change, so an interrupted deploy (a restart) resumes where it was.
 * Transient failures are retried with back-off; a conflict is not.
 */
import * as t from "io-ts";
import { cappedExponentialMs } from "../shared/backoff.js";
import { stableJson } from "./identity.js";
import { enqueueDb } from "./db-queue.js";
import { copyMap, count, ddocKeyOf, emit, log, update, type Draft, type IndexingState } from "./state.js";
import type { DbName, DeployEvent, DesignDocId } from "./types.js";

export type DeployPhase = "staging" | "building" | "swapping" | "removing-stage" | "done" | "failed" | "cancelled";
export type DeployEnding = "done" | "failed" | "cancelled";

const PhaseC = t.keyof({ staging: null, building: null, swapping: null, "removing-stage": null, done: null, failed: null, cancelled: null });
const EndingC = t.keyof({ done: null, failed: null, cancelled: null });

/** What is persisted of a deploy (decoded on restore: never trusted). */
export const DeployRecordC = t.intersection([
  t.type({
    db: t.string,
    ddoc: t.string,
    stageId: t.string,
    body: t.record(t.string, t.unknown),
    phase: PhaseC,
    requestedAtMs: t.number,
    updatedAtMs: t.number,
    attempts: t.number,
  }),
  t.partial({
    liveRev: t.union([t.string, t.null]),
    stagedSeq: t.number,
    ending: EndingC,
    lag: t.number,
    indexes: t.number,
    error: t.string,
  }),
]);
export type DeployRecord = t.TypeOf<typeof DeployRecordC>;

export interface Deploy extends DeployRecord {
  readonly inFlight: boolean;
  readonly nextAttemptAtMs: number;
  readonly nextCheckAtMs: number;
}

export const STAGE_SUFFIX = ".upholster-stage";
export const stageIdOf = (ddoc: DesignDocId): DesignDocId => `${ddoc}${STAGE_SUFFIX}`;
export const deployIdOf = (db: DbName, ddoc: DesignDocId): string => ddocKeyOf(db, ddoc);

const ACTIVE: ReadonlySet<DeployPhase> = new Set(["staging", "building", "swapping", "removing-stage"]);
export const isActive = (deploy: Pick<DeployRecord, "phase">): boolean => ACTIVE.has(deploy.phase);

export const sameBody = (a: unknown, b: unknown): boolean => stableJson(a) === stableJson(b);

const setDeploy = (d: Draft, deploy: Deploy): void => {
  update(d, { deploys: copyMap(d.state.deploys, (m) => m.set(deployIdOf(deploy.db, deploy.ddoc), deploy)) });
};

/** The records, for the `persist` effect and status. */
export const deployRecords = (state: IndexingState): DeployRecord[] =>
  [...state.deploys.values()].map(({ inFlight: _inFlight, nextAttemptAtMs: _next, nextCheckAtMs: _check, ...record }) => record);

const persist = (d: Draft): void => {
  emit(d, { type: "persist", deploys: deployRecords(d.state) });
};

/** Move to `phase` (persisted), ready to carry it out now. */
const enter = (d: Draft, deploy: Deploy, phase: DeployPhase, patch: Partial<DeployRecord> = {}): Deploy => {
  // A step still in flight (a cancel came meanwhile) is waited for: the next one starts after its answer.
  const next: Deploy = { ...deploy, ...patch, phase, attempts: 0, nextAttemptAtMs: d.nowMs, updatedAtMs: d.nowMs };
  setDeploy(d, next);
  if (!isActive(next)) finish(d, next);
  persist(d);
  log(d, phase === "failed" ? "warn" : "info", `ken: deploy ${phase}`, { db: deploy.db, ddoc: deploy.ddoc, ...(next.error !== undefined ? { error: next.error } : {}) });
  return next;
};

const finish = (d: Draft, deploy: Deploy): void => {
  update(d, { hints: d.state.hints.delete(ddocKeyOf(deploy.db, deploy.stageId)) });
  count(d, deploy.phase === "done" ? "deploysDone" : "deploysFailed", deploy.phase === "cancelled" ? 0 : 1);
  if (deploy.phase === "done" && d.state.config.removeOldIndices) {
    // The index the old version used is stale now: clean it once the db has been looked at.
    update(d, { cleanupDue: new Set([...d.state.cleanupDue, deploy.db]) });
    enqueueDb(d, deploy.db);
  }
  trimFinished(d);
};

const trimFinished = (d: Draft): void => {
  const finished = [...d.state.deploys.values()].filter((deploy) => !isActive(deploy)).sort((a, b) => b.updatedAtMs - a.updatedAtMs);
  const doomed = finished.slice(d.state.config.deployKeep);
  if (doomed.length > 0) update(d, { deploys: copyMap(d.state.deploys, (m) => doomed.forEach((deploy) => m.delete(deployIdOf(deploy.db, deploy.ddoc)))) });
};

/** Why a deploy request cannot be taken, or undefined. The HTTP route asks first, to answer with it. */
export const deployRefusal = (state: IndexingState, db: DbName, ddoc: DesignDocId, body: unknown): string | undefined => {
  if (state.ignored.has(db)) return `${db} is in [ken.ignore]`;
  if (ddoc.endsWith(STAGE_SUFFIX)) return `${ddoc} is a stage name`;
  const current = state.deploys.get(deployIdOf(db, ddoc));
  if (current !== undefined && isActive(current) && !sameBody(current.body, body)) {
    return `a deploy of ${ddoc} with another body is in progress (phase ${current.phase}); cancel it first`;
  }
  return undefined;
};

const request = (d: Draft, db: DbName, ddoc: DesignDocId, body: Readonly<Record<string, unknown>>): void => {
  const refusal = deployRefusal(d.state, db, ddoc, body);
  if (refusal !== undefined) {
    log(d, "warn", "ken: deploy refused", { db, ddoc, reason: refusal });
    return;
  }
  const current = d.state.deploys.get(deployIdOf(db, ddoc));
  if (current !== undefined && isActive(current)) return; // the same deploy again: it goes on
  const deploy: Deploy = {
    db,
    ddoc,
    stageId: stageIdOf(ddoc),
    body: { ...body },
    phase: "staging",
    requestedAtMs: d.nowMs,
    updatedAtMs: d.nowMs,
    attempts: 0,
    inFlight: false,
    nextAttemptAtMs: d.nowMs,
    nextCheckAtMs: d.nowMs,
  };
  setDeploy(d, deploy);
  persist(d);
  log(d, "info", "ken: deploy requested", { db, ddoc, stage: deploy.stageId });
};

const failStep = (d: Draft, deploy: Deploy, error: string, transient: boolean, conflict: boolean): void => {
  const attempts = deploy.attempts + 1;
  const { retryInitialMs, retryMaxMs, retryMaxAttempts } = d.state.config;
  if (conflict || (!transient && attempts > retryMaxAttempts) || (deploy.phase === "removing-stage" && !transient)) {
    if (deploy.phase === "staging" || deploy.phase === "removing-stage") enter(d, deploy, "failed", { error, ending: undefined });
    else enter(d, deploy, "removing-stage", { ending: "failed", error });
    return;
  }
  setDeploy(d, { ...deploy, attempts, error, nextAttemptAtMs: d.nowMs + cappedExponentialMs(retryInitialMs, retryMaxMs, attempts - 1) });
  log(d, "warn", "ken: deploy step failed; retrying", { db: deploy.db, ddoc: deploy.ddoc, phase: deploy.phase, error, attempts });
};

/** Built far enough to swap in: every index at least where the db was when staged, and close to the db now. */
const isBuilt = (deploy: DeployRecord, check: { lag: number; minIndexSeq: number | undefined }, maxLag: number): boolean =>
  check.lag <= maxLag && (check.minIndexSeq === undefined || check.minIndexSeq >= (deploy.stagedSeq ?? 0));

const byId = (d: Draft, deployId: string): Deploy | undefined => d.state.deploys.get(deployId);

/** The phase whose step each answer settles. */
const ANSWERS: Readonly<Record<string, DeployPhase>> = {
  "deploy-staged": "staging",
  "deploy-checked": "building",
  "deploy-swapped": "swapping",
  "deploy-stage-removed": "removing-stage",
};

export const onDeployEvent = (d: Draft, event: DeployEvent): void => {
  if (event.type === "deploy-requested") return request(d, event.db, event.ddoc, event.body);
  if (event.type === "deploys-restored") return restore(d, event.deploys);
  if (event.type === "deploy-cancel") {
    const deploy = byId(d, deployIdOf(event.db, event.ddoc));
    // Once swapping, it is too late: the live design doc may be written already.
    if (deploy !== undefined && (deploy.phase === "staging" || deploy.phase === "building")) enter(d, deploy, "removing-stage", { ending: "cancelled" });
    return;
  }
  const found = byId(d, event.deployId);
  if (found === undefined || !found.inFlight) return;
  const deploy: Deploy = { ...found, inFlight: false };
  setDeploy(d, deploy);
  // The answer to a step of a phase it has left (cancelled meanwhile): only the step's end matters.
  if (event.type !== "deploy-step-failed" && ANSWERS[event.type] !== deploy.phase) return;
  switch (event.type) {
    case "deploy-staged":
      // First checked when a build of the stage ends, or after a period.
      setDeploy(d, { ...enter(d, deploy, "building", { liveRev: event.liveRev, stagedSeq: event.stagedSeq, error: undefined }), nextCheckAtMs: d.nowMs + d.state.config.deployCheckMs });
      update(d, { hints: d.state.hints.set(ddocKeyOf(deploy.db, deploy.stageId), d.nowMs) });
      enqueueDb(d, deploy.db);
      return;
    case "deploy-checked":
      if (isBuilt(deploy, event, d.state.config.deployMaxLag)) enter(d, deploy, "swapping", { lag: event.lag, indexes: event.indexes });
      else setDeploy(d, { ...deploy, lag: event.lag, indexes: event.indexes, error: undefined, nextCheckAtMs: d.nowMs + d.state.config.deployCheckMs });
      return;
    case "deploy-swapped":
      enter(d, deploy, "removing-stage", { ending: "done", error: undefined });
      return;
    case "deploy-stage-removed":
      enter(d, deploy, deploy.ending ?? "done");
      return;
    case "deploy-step-failed":
      failStep(d, deploy, event.error, event.transient, event.conflict === true);
      return;
  }
};

const restore = (d: Draft, records: readonly DeployRecord[]): void => {
  for (const record of records) {
    setDeploy(d, { ...record, inFlight: false, nextAttemptAtMs: d.nowMs, nextCheckAtMs: d.nowMs });
    if (isActive(record)) log(d, "info", "ken: deploy resumed", { db: record.db, ddoc: record.ddoc, phase: record.phase });
  }
};

/** Carry out each active deploy's step when it is due and none is in flight. */
export const pumpDeploys = (d: Draft): void => {
  for (const deploy of d.state.deploys.values()) {
    if (!isActive(deploy) || deploy.inFlight || d.nowMs < deploy.nextAttemptAtMs) continue;
    if (deploy.phase === "building" && d.nowMs < deploy.nextCheckAtMs) continue;
    setDeploy(d, { ...deploy, inFlight: true });
    const { db, ddoc, stageId, body } = deploy;
    const deployId = deployIdOf(db, ddoc);
    if (deploy.phase === "staging") emit(d, { type: "deploy-stage", deployId, db, ddoc, stageId, body });
    else if (deploy.phase === "building") emit(d, { type: "deploy-check", deployId, db, stageId });
    else if (deploy.phase === "swapping") emit(d, { type: "deploy-swap", deployId, db, ddoc, body, liveRev: deploy.liveRev ?? null });
    else emit(d, { type: "deploy-remove-stage", deployId, db, stageId });
  }
};

/** Stages being built: their indexes are built whatever their autoupdate says. */
export const forcedDesignDocs = (state: IndexingState, db: DbName): ReadonlySet<DesignDocId> => {
  const forced = new Set<DesignDocId>();
  for (const deploy of state.deploys.values()) {
    if (deploy.db === db && (deploy.phase === "staging" || deploy.phase === "building" || deploy.phase === "swapping")) forced.add(deploy.stageId);
  }
  return forced;
};

/** A build of a stage's index ended: check the deploy now rather than at its next period. */
export const checkDeploysSoon = (d: Draft, db: DbName, ddocs: readonly DesignDocId[]): void => {
  for (const deploy of d.state.deploys.values()) {
    if (deploy.db === db && deploy.phase === "building" && ddocs.includes(deploy.stageId)) setDeploy(d, { ...deploy, nextCheckAtMs: d.nowMs });
  }
};

/** The db is gone: its deploys cannot go on. */
export const failDeploysOf = (d: Draft, db: DbName): void => {
  for (const deploy of d.state.deploys.values()) {
    if (deploy.db === db && isActive(deploy)) enter(d, deploy, "failed", { error: "the database was deleted", ending: undefined });
  }
};

export const nextDeployWakeMs = (state: IndexingState): number | undefined => {
  let earliest: number | undefined;
  for (const deploy of state.deploys.values()) {
    if (!isActive(deploy) || deploy.inFlight) continue;
    const atMs = deploy.phase === "building" ? Math.max(deploy.nextAttemptAtMs, deploy.nextCheckAtMs) : deploy.nextAttemptAtMs;
    if (earliest === undefined || atMs < earliest) earliest = atMs;
  }
  return earliest;
};
