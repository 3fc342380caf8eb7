// Gateway metrics from an active probe: timed GET requests to a gateway URL at a fixed
// interval, kept in a rolling window. Needs nothing from the gateway but an endpoint, at the
// price of a small sample: the governor probes 20 times a window (gateway-metrics.js), so a
// window's p95 is its worst probe or about, and its p99 the worst. Use a cheap endpoint that
// still goes through the same router and dynos as real traffic (a health check that skips
// the app measures the router).
import { performance } from 'node:perf_hooks';
import { createHttpGet, isTimeout } from './http-get.js';
import { unavailable, messageOf, positive } from './reading.js';

/** @typedef {import('./reading.js').GatewayMetricSource} GatewayMetricSource */

/**
 * @typedef {object} ActiveProbeOptions
 * @property {string} url            what to GET
 * @property {number} [intervalMs]   one probe started this often (default 1000)
 * @property {number} [timeoutMs]    a probe slower than this fails, counted at this latency (default 5000)
 * @property {number} [concurrency]  at most this many probes in flight; a tick past it is skipped (default 4)
 * @property {number} [windowMs]     the rolling window of results read() summarises (default 10000)
 * @property {number} [staleAfterMs] stale when the newest result is older (default 3 × intervalMs + timeoutMs)
 * @property {Record<string, string>} [headers]
 * @property {() => number} [now]    clock in ms for the window and staleness (latency uses performance.now)
 */

/**
 * The q-quantile of a small sample: the value at rank q·(n + 1), interpolating between the
 * two nearest (Hyndman and Fan's type 6), clamped to the sample. The i-th smallest of n draws
 * sits at the i/(n + 1) quantile on average, so this rank is where the q-quantile falls; the
 * usual rank, 1 + q·(n − 1), puts a sample's largest at its q = 1 and reads a tail quantile
 * of few draws low. A probe's p95 is such a quantile: of five probes a 2-s window it was
 * the 80th percentile or so, and on the demo's real gateway the governor's readings were 0.73
 * to 0.84 of the p95 the phones timed in the same 5-s windows, the scrape's 0.86 (bench/
 * RESULTS.md, 2026-11-30 07:29): the probe's setpoint of 300 ms sat at about 400 of theirs.
 * @param {number[]} sorted  ascending, not empty
 * @param {number} q  0..1
 */
export function sampleQuantile(sorted, q) {
  const pos = Math.min(sorted.length - 1, Math.max(0, q * (sorted.length + 1) - 1));
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * An active-probe gateway metric source. It starts probing at once and until close().
 * It cannot see the gateway's traffic, so its `rps` is null: the controller then reads the
 * gateway's load off its latency curve. (It once answered its own probes per second there,
 * and the controller read 2.7 probes/s as the gateway's load: requests per send fell to 0,
 * the plan flooded the gateway.) `probes` is how many results the window holds.
 * Errors are answers other than 2xx, connection failures and timeouts.
 * @param {ActiveProbeOptions} options
 * @returns {GatewayMetricSource}
 */
export function createActiveProbeSource(options) {
  const url = new URL(options.url);
  const intervalMs = positive('intervalMs', options.intervalMs ?? 1000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 5000);
  const concurrency = positive('concurrency', options.concurrency ?? 4);
  const windowMs = positive('windowMs', options.windowMs ?? 10_000);
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs ?? 3 * intervalMs + timeoutMs);
  const now = options.now ?? Date.now;
  const http = createHttpGet({ timeoutMs, maxSockets: concurrency, maxBodyBytes: 1024 * 1024 });
  /** @type {{ at: number, latencyMs: number, ok: boolean }[]} oldest first */
  let results = [];
  /** @type {string | undefined} */
  let lastError;
  let inFlight = 0;
  /** @type {Set<Promise<void>>} */
  const pending = new Set();

  async function probe() {
    const started = performance.now();
    let ok = false;
    let timedOut = false;
    try {
      const answer = await http.get(url, options.headers);
      ok = answer.status >= 200 && answer.status < 300;
      if (!ok) lastError = `probe: HTTP ${answer.status} from ${url.origin}${url.pathname}`;
    } catch (err) {
      timedOut = isTimeout(err);
      lastError = `probe: ${messageOf(err)}`;
    }
    // A timed-out probe took at least the timeout (its true latency is unknown); counting it
    // there keeps it in the tail. Timer granularity can fire the abort a hair early.
    const latencyMs = timedOut ? timeoutMs : performance.now() - started;
    results.push({ at: now(), latencyMs, ok });
  }

  function tick() {
    // Bounded: when the gateway hangs, probes pile up until their timeout; skipping ticks
    // then keeps the probe from adding load to a gateway that is already in trouble.
    if (inFlight >= concurrency) return;
    inFlight++;
    const run = probe().finally(() => {
      inFlight--;
      pending.delete(run);
    });
    pending.add(run);
  }

  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();

  return {
    async read() {
      const at = now();
      results = results.filter((r) => r.at > at - windowMs);
      const newest = results.length > 0 ? results[results.length - 1].at : -Infinity;
      const ageMs = Math.max(0, at - newest);
      if (ageMs > staleAfterMs) return unavailable(ageMs, staleAfterMs, lastError);
      const latencies = results.map((r) => r.latencyMs).sort((a, b) => a - b);
      const failed = results.filter((r) => !r.ok).length;
      return {
        gateway: {
          p95Ms: sampleQuantile(latencies, 0.95),
          p99Ms: sampleQuantile(latencies, 0.99),
          errorRatio: failed / results.length,
          rps: null
        },
        probes: results.length,
        stale: false,
        ageMs
      };
    },
    async close() {
      clearInterval(timer);
      await Promise.allSettled([...pending]);
      http.close();
    }
  };
}
