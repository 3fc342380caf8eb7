// Who may do what on the dashboard. Control actions (pause, resume, cancel) need the
// DASHBOARD_TOKEN as `Authorization: Bearer <token>`; without a configured token they are
// refused for everyone. Reads (campaigns, charts, schedules, /metrics on the web port) are
// open unless DASHBOARD_PUBLIC=false, which asks for the token there too.
//
// The browser sends the token from JavaScript in a header, never as a cookie, so another
// site cannot make a visitor's browser send it (no CSRF), and it never appears in URLs or
// access logs.
import { createHash, timingSafeEqual } from 'node:crypto';

/** @param {string} value */
const digest = (value) => createHash('sha256').update(value, 'utf8').digest();

/**
 * @param {{ token: string | null, publicReads: boolean }} config config.dashboard
 */
export function createDashboardAuth({ token, publicReads }) {
  // Comparing fixed-length digests in constant time says nothing about the token's length or prefix.
  const expected = token ? digest(token) : null;

  /**
   * @param {string | undefined} authorization the request's Authorization header
   * @returns {'ok' | 'missing' | 'wrong' | 'disabled'}
   */
  function check(authorization) {
    if (!expected) return 'disabled';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!match) return 'missing';
    return timingSafeEqual(digest(match[1]), expected) ? 'ok' : 'wrong';
  }

  return {
    /** Whether control actions can be authorised at all (a token is configured). */
    controlEnabled: expected !== null,
    publicReads,
    check,
    /** @param {string | undefined} authorization */
    canRead: (authorization) => publicReads || check(authorization) === 'ok',
    /** @param {string | undefined} authorization */
    canControl: (authorization) => check(authorization) === 'ok'
  };
}

/** @typedef {ReturnType<typeof createDashboardAuth>} DashboardAuth */
