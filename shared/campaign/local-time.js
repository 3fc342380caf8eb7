// Local-time delivery: "09:00 in each device's time zone". A campaign names one
// wall-clock time; every time zone in its audience is released at the next instant
// at or after the campaign's start when the clocks in that zone read that time.
// So a zone where 09:00 has already passed today gets it at 09:00 tomorrow: a
// marketer who writes 09:00 means "on the user's clock", never "at 13:00 because we
// launched late". Whoever wants "today or not at all" adds a deadline.
//
// Wall times that do not exist or exist twice (daylight-saving changes) follow the
// product's one rule (zoned-time.js, cron's): a time the clocks skip means the instant
// they jump (02:30 on the spring-forward day in New York is 03:00 EDT), a time they
// repeat means its first occurrence, or the second when the launch falls between them
// (the next time the clock reads it).
import { localTimeOf, offsetsAround, wallTimeInstants } from '../zoned-time.js';

/** @typedef {{ hour: number, minute: number, second: number, text: string }} LocalTime */
/** @typedef {{ at: number, zones: string[], devices: number }} ReleaseGroup */

const LOCAL_TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;

/**
 * Parses "HH:MM" or "HH:MM:SS" (24-hour), or returns null.
 * @param {string} text
 * @returns {LocalTime | null}
 */
export function parseLocalTime(text) {
  const match = LOCAL_TIME.exec(text.trim());
  if (!match) return null;
  const [hour, minute, second] = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return { hour, minute, second, text: `${pad(hour)}:${pad(minute)}${match[3] === undefined ? '' : `:${pad(second)}`}` };
}

/**
 * The first instant at or after `afterMs` when the wall clock in `zone` reads `time`
 * (on the day the clocks skip it: when they jump).
 * @param {string} zone IANA name (already validated)
 * @param {LocalTime} time
 * @param {number} afterMs ms since the epoch
 * @returns {number} ms since the epoch
 */
export function nextLocalOccurrence(zone, time, afterMs) {
  const today = localTimeOf(afterMs, zone);
  // Two days always suffice: tomorrow's occurrence is at most ~25 h away.
  for (let days = 0; days <= 2; days++) {
    const wall = Date.UTC(today.year, today.month - 1, today.day + days, time.hour, time.minute, time.second);
    // Launched between the two occurrences of a repeated time: the second one is next.
    const instant = wallTimeInstants(wall, offsetsAround(wall, zone)).find((t) => t >= afterMs);
    if (instant !== undefined) return instant;
  }
  throw new Error(`no occurrence of ${time.text} in ${zone} within two days of ${new Date(afterMs).toISOString()}`);
}

/**
 * Groups an audience's time zones by their release instant: zones with the same
 * offset share one (Europe/Paris and Europe/Berlin), so there are a few dozen groups
 * at most, however many zones. Sorted by release instant.
 * @param {Map<string, number>} devicesByZone
 * @param {(zone: string) => number} releaseOf
 * @returns {ReleaseGroup[]}
 */
export function groupReleases(devicesByZone, releaseOf) {
  /** @type {Map<number, ReleaseGroup>} */
  const groups = new Map();
  for (const [zone, devices] of devicesByZone) {
    const at = releaseOf(zone);
    let group = groups.get(at);
    if (!group) groups.set(at, group = { at, zones: [], devices: 0 });
    group.zones.push(zone);
    group.devices += devices;
  }
  for (const group of groups.values()) group.zones.sort();
  return [...groups.values()].sort((a, b) => a.at - b.at);
}
