import type { Weekday } from './risk-rules.js';

/** The zone a day is counted in when the rules name none. */
export const DEFAULT_DAY_ZONE = 'UTC';

const WEEKDAYS: Record<string, Weekday> = {
  Mon: 'mon',
  Tue: 'tue',
  Wed: 'wed',
  Thu: 'thu',
  Fri: 'fri',
  Sat: 'sat',
  Sun: 'sun',
};

/** The wall clock of `zone` at instant `at` (epoch ms). Throws RangeError for a zone the runtime does not know. */
export interface LocalTime {
  /** 'YYYY-MM-DD' */
  date: string;
  weekday: Weekday;
  /** Minutes since local midnight. */
  minutes: number;
  /** 'HH:MM' */
  clock: string;
}

const FORMATS = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = FORMATS.get(zone);
  if (!format) {
    // Throws RangeError on an unknown zone, which the caller turns into a refusal naming it.
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    FORMATS.set(zone, format);
  }
  return format;
}

export function localTime(at: number, zone: string): LocalTime {
  if (zone === DEFAULT_DAY_ZONE) return utcTime(at);
  const parts: Record<string, string> = {};
  for (const part of formatOf(zone).formatToParts(at)) parts[part.type] = part.value;
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  return wallClock(date, WEEKDAYS[parts.weekday!]!, Number(parts.hour) % 24, Number(parts.minute));
}

/** What `localTime` answers for `hour`:`minute` on `date`, however the zone was read. */
function wallClock(date: string, weekday: Weekday, hour: number, minute: number): LocalTime {
  return { date, weekday, minutes: hour * 60 + minute, clock: `${twoDigits(hour)}:${twoDigits(minute)}` };
}

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

const UTC_WEEKDAYS: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/**
 * UTC's wall clock from the instant itself. The zone most accounts count their days in is read
 * without Intl: the first Intl formatter of a process loads the time zone data, a cost each agent
 * paid at start whether or not a rule named a zone (decision 0071).
 */
function utcTime(at: number): LocalTime {
  const day = new Date(at);
  // As Intl does for an instant it cannot format.
  if (Number.isNaN(day.getTime())) throw new RangeError('Invalid time value');
  const date = `${day.getUTCFullYear()}-${twoDigits(day.getUTCMonth() + 1)}-${twoDigits(day.getUTCDate())}`;
  return wallClock(date, UTC_WEEKDAYS[day.getUTCDay()]!, day.getUTCHours(), day.getUTCMinutes());
}

/** The day `at` falls on in `zone`, as the key entries and the day's starting equity are kept under: 'Europe/London 2026-12-02'. */
export function riskDayKey(at: number, zone: string | null | undefined): string {
  const z = zone ?? DEFAULT_DAY_ZONE;
  return `${z} ${localTime(at, z).date}`;
}
