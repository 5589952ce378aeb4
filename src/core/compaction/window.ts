/**
 * Time windows (`from`/`to`, HH:MM in UTC) as minutes of the day.
 *
 * As CouchDB's `smoosh_utils:in_allowed_window/1`: a missing `from` is 00:00,
 * a missing `to` is 24:00; `from < to` allows [from, to); otherwise the window
 * wraps midnight and allows [from, 24:00) and [00:00, to), so `from == to`
 * means always (CouchDB's behaviour, kept).
 */

export const MINUTES_PER_DAY = 1440;
const MS_PER_MINUTE = 60_000;

export interface TimeWindow {
  /** Minute of the day the window opens, 0..1439. */
  readonly fromMinute: number;
  /** Minute of the day it closes, 0..1440 (1440 = 24:00). */
  readonly toMinute: number;
}

/** `HH:MM` (00:00 .. 24:00) to minutes of the day, or undefined when malformed. */
export const parseClock = (s: string): number | undefined => {
  const m = /^(\d{1,2}):(\d{2})$/.exec(s.trim());
  if (m === null) return undefined;
  const hours = Number(m[1]);
  const minutes = Number(m[2]);
  if (minutes > 59 || hours > 24 || (hours === 24 && minutes !== 0)) return undefined;
  return hours * 60 + minutes;
};

/** Minute of the UTC day of an epoch time (pure arithmetic: no Date, no time zone). */
export const minuteOfDay = (nowMs: number): number =>
  ((Math.floor(nowMs / MS_PER_MINUTE) % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY;

/** No window configured, or one that is open all day. */
export const isAlwaysOpen = (window: TimeWindow | undefined): boolean =>
  window === undefined ||
  window.fromMinute === window.toMinute ||
  (window.fromMinute === 0 && window.toMinute >= MINUTES_PER_DAY);

export const inWindow = (window: TimeWindow | undefined, nowMs: number): boolean => {
  if (window === undefined || isAlwaysOpen(window)) return true;
  const minute = minuteOfDay(nowMs);
  const { fromMinute, toMinute } = window;
  return fromMinute < toMinute
    ? minute >= fromMinute && minute < toMinute
    : minute >= fromMinute || minute < toMinute;
};

/**
 * The first time after `nowMs` at which the window opens or closes, so the
 * core can ask to be woken exactly then. Undefined when it never changes.
 */
export const nextWindowBoundaryMs = (window: TimeWindow | undefined, nowMs: number): number | undefined => {
  if (window === undefined || isAlwaysOpen(window)) return undefined;
  const dayStartMs = nowMs - (((nowMs % (MINUTES_PER_DAY * MS_PER_MINUTE)) + MINUTES_PER_DAY * MS_PER_MINUTE) % (MINUTES_PER_DAY * MS_PER_MINUTE));
  const candidates: number[] = [];
  for (const dayOffset of [0, 1]) {
    for (const minute of [window.fromMinute, window.toMinute % MINUTES_PER_DAY]) {
      candidates.push(dayStartMs + (dayOffset * MINUTES_PER_DAY + minute) * MS_PER_MINUTE);
    }
  }
  return Math.min(...candidates.filter((t) => t > nowMs));
};
