/**
 * What the check policy derives from a config: its schedule settings and
 * each kind's channels in configured order. Worked out once per config
 * object (configs are immutable), because every update and every answer asks.
 */
import type { ScheduleSettings } from "./check-schedule.js";
import { channelsFor, type ChannelConfig } from "./config.js";
import { channelKindOf } from "./object.js";
import type { SmooshState } from "./state.js";
import type { ChannelKind, CompactionObject } from "./types.js";

interface Derived {
  readonly settings: ScheduleSettings;
  /** Each kind's channels, in configured order. */
  readonly channels: Readonly<Record<ChannelKind, readonly ChannelConfig[]>>;
}

const derivedByConfig = new WeakMap<SmooshState["config"], Derived>();

const derivedOf = (config: SmooshState["config"]): Derived => {
  let derived = derivedByConfig.get(config);
  if (derived === undefined) {
    const channelsOfKind = (kind: ChannelKind): ChannelConfig[] =>
      channelsFor(config, kind).flatMap((name) => {
        const channel = config.channels[name];
        return channel === undefined ? [] : [channel];
      });
    derived = {
      settings: {
        minCheckIntervalMs: config.minCheckIntervalMs,
        maxCheckIntervalMs: config.maxCheckIntervalSecs * 1000,
        stalenessMs: config.stalenessMinutes * 60_000,
      },
      channels: { db: channelsOfKind("db"), view: channelsOfKind("view"), cleanup: channelsOfKind("cleanup") },
    };
    derivedByConfig.set(config, derived);
  }
  return derived;
};

export const settingsOf = (state: SmooshState): ScheduleSettings => derivedOf(state.config).settings;

export const channelConfigsFor = (state: SmooshState, object: CompactionObject): readonly ChannelConfig[] =>
  derivedOf(state.config).channels[channelKindOf(object.kind)];
