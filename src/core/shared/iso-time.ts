/**
 * An epoch time as ISO 8601 UTC (`2026-11-23T19:49:35.000Z`, what
 * `Date.prototype.toISOString` gives), in pure arithmetic: the core holds no
 * `Date`. Days to civil date: Howard Hinnant's `civil_from_days`.
 */
const DAY_MS = 86_400_000;

const pad = (value: number, width: number): string => String(value).padStart(width, "0");

const civilFromDays = (days: number): { year: number; month: number; day: number } => {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
};

/** For epoch times from year 0 to 9999 (status timestamps); others as `toISOString` would not format them either. */
export const isoOfEpochMs = (epochMs: number): string => {
  const ms = Math.floor(epochMs);
  const days = Math.floor(ms / DAY_MS);
  const ofDay = ms - days * DAY_MS;
  const { year, month, day } = civilFromDays(days);
  const hours = Math.floor(ofDay / 3_600_000);
  const minutes = Math.floor((ofDay % 3_600_000) / 60_000);
  const seconds = Math.floor((ofDay % 60_000) / 1000);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(ofDay % 1000, 3)}Z`;
};
