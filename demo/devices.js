// The demo's phones and the rest of the app's traffic, as load on the gateway.
//
// Every push the SNS emulator delivers reaches one simulated device. With probability
// `openProbability` its user opens the app after a log-normal delay (median
// `openDelayMedianMs`, shape `openDelaySigma`), and the app then makes `requestsPerOpen`
// requests, each an exponential time (mean `sessionMeanMs`) after the open: a burst at the
// open, then a trickle. This is the simulator's world (docs/simulator.md), in compressed
// time, and deliberately not the controller's model family (its sessions are uniform).
// Besides, `baselineRps` requests per second arrive from users who were not pushed (Poisson).
//
// Requests are due on a 5-ms time wheel rather than one timer each: thousands of pending
// wake-ups then cost one interval timer.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createRandom } from './random.js';

const TICK_MS = 5;

/**
 * @typedef {object} DeviceOptions
 * @property {string} gatewayUrl
 * @property {number} baselineRps
 * @property {number} openProbability
 * @property {number} requestsPerOpen     a fraction is rounded at random, so the mean is exact
 * @property {number} openDelayMedianMs
 * @property {number} openDelaySigma
 * @property {number} sessionMeanMs
 * @property {number} [seed]
 */

/** @param {DeviceOptions} options */
export function createDevices({ gatewayUrl, baselineRps, openProbability, requestsPerOpen, openDelayMedianMs, openDelaySigma, sessionMeanMs, seed = 2 }) {
  const random = createRandom(seed);
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  /** slot (ms / TICK_MS) → wake-up requests due then */
  /** @type {Map<number, number>} */
  const due = new Map();
  /** endpoint ARN → pushes it received */
  /** @type {Map<string, number>} */
  const received = new Map();
  /** Deliveries per whole second since the epoch: the demo's measured send rate. */
  /** @type {Map<number, number>} */
  const deliveriesPerSecond = new Map();
  /** Every call as the phone saw it: [end (epoch ms), latency ms, status (0: no answer)], flattened. */
  /** @type {number[]} */
  const samples = [];
  /** Why calls failed: HTTP status or socket error code → count. */
  /** @type {Map<string, number>} */
  const failures = new Map();
  const counts = { deliveries: 0, duplicates: 0, opens: 0, scheduled: 0, requests: 0, ok: 0, errors: 0, failed: 0, inFlight: 0 };
  let lastSlot = Math.floor(Date.now() / TICK_MS);
  let lastDeliveryAt = 0;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;

  function call() {
    counts.requests++;
    counts.inFlight++;
    const started = performance.now();
    let settled = false;
    const settle = (/** @type {number} */ status) => {
      if (settled) return;
      settled = true;
      counts.inFlight--;
      const latencyMs = performance.now() - started;
      samples.push(performance.timeOrigin + started + latencyMs, latencyMs, status);
    };
    const req = request(`${gatewayUrl}/api/feed`, { agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (status === 200) counts.ok++;
      else {
        counts.errors++;
        failures.set(`HTTP ${status}`, (failures.get(`HTTP ${status}`) ?? 0) + 1);
      }
      res.resume();
      res.on('end', () => settle(status));
    });
    // Heroku's router gives up after 30 s; so does the phone here.
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => {
      if (!settled) {
        counts.failed++;
        const reason = /** @type {NodeJS.ErrnoException} */ (error).code ?? error.message;
        failures.set(reason, (failures.get(reason) ?? 0) + 1);
      }
      settle(0);
    });
    req.end();
  }

  function tick() {
    const now = Date.now();
    const slot = Math.floor(now / TICK_MS);
    for (let s = lastSlot + 1; s <= slot; s++) {
      const n = due.get(s);
      if (n === undefined) continue;
      due.delete(s);
      counts.scheduled -= n;
      for (let i = 0; i < n; i++) call();
    }
    // Users who were not pushed: a Poisson number per elapsed tick.
    const baseline = random.poisson((baselineRps * (slot - lastSlot) * TICK_MS) / 1000);
    for (let i = 0; i < baseline; i++) call();
    lastSlot = slot;
  }

  return {
    /** Starts the baseline traffic and the wake-up clock. */
    start() {
      lastSlot = Math.floor(Date.now() / TICK_MS);
      timer ??= setInterval(tick, TICK_MS);
    },

    /**
     * A push arrived at a device (the SNS emulator's onDelivery).
     * @param {string} targetArn
     * @param {number} at  ms since the epoch
     */
    delivered(targetArn, at) {
      counts.deliveries++;
      lastDeliveryAt = Math.max(lastDeliveryAt, at);
      const second = Math.floor(at / 1000);
      deliveriesPerSecond.set(second, (deliveriesPerSecond.get(second) ?? 0) + 1);
      const before = received.get(targetArn) ?? 0;
      received.set(targetArn, before + 1);
      // A second push to the same phone is what the demo checks never happens; its user
      // would not open the app twice for it either.
      if (before > 0) { counts.duplicates++; return; }
      if (random.uniform() >= openProbability) return;
      counts.opens++;
      const openAt = at + openDelayMedianMs * Math.exp(openDelaySigma * random.normal());
      const whole = Math.floor(requestsPerOpen);
      const n = whole + (random.uniform() < requestsPerOpen - whole ? 1 : 0);
      for (let i = 0; i < n; i++) {
        // Never in a slot the clock has passed already.
        const slot = Math.max(lastSlot + 1, Math.ceil((openAt + random.exponential(sessionMeanMs)) / TICK_MS));
        due.set(slot, (due.get(slot) ?? 0) + 1);
        counts.scheduled++;
      }
    },

    /** Counters: deliveries, duplicates, opens, wake-up requests still scheduled, gateway calls and their outcomes. */
    stats: () => ({ ...counts, distinctDevices: received.size, lastDeliveryAt, failures: Object.fromEntries(failures) }),

    /** Every call's end, latency and status (0: no answer), as the phone saw them, flattened. */
    samples: () => samples,

    /** Deliveries per second since the epoch. */
    deliveriesPerSecond: () => deliveriesPerSecond,

    /** Stops the traffic (scheduled wake-ups are dropped) and closes the sockets. */
    stop() {
      clearInterval(timer);
      timer = undefined;
      agent.destroy();
    }
  };
}

/** @typedef {ReturnType<typeof createDevices>} Devices */
