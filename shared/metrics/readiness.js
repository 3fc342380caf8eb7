// Readiness checks: can this process reach what it needs (Redis, PostgreSQL, SNS; RabbitMQ's
// is queue/rabbitmq-connection.js's)? /readyz runs them, and pushpace_dependency_up
// reports them on each scrape.
//
// Probes are cheap and bounded: each check has a timeout (a dead dependency answers
// "not ready" within it instead of hanging the probe), runs at most once at a time, and
// keeps its result for a while, so a probe storm or a busy scrape adds no load. Checks that
// open a connection (RabbitMQ) or leave the network (AWS) keep their result longer.
import { performance } from 'node:perf_hooks';
import { redactUrl } from '../redact-url.js';

/**
 * @typedef {object} ReadinessCheck
 * @property {string} name          the dependency: redis, rabbitmq, postgres, sns...
 * @property {() => Promise<void>} check  resolves when reachable, rejects with the reason
 * @property {number} [timeoutMs]   counts as failed after this long (default 1500)
 * @property {number} [cacheMs]     a result is reused this long (default 1000)
 */

/** @typedef {{ name: string, ok: boolean, ms: number, error?: string }} CheckResult */

/**
 * Redis answers PING on the process's own connection (the one its work uses).
 * @param {import('../redis.js').RedisClient} redis
 * @param {string} [name]
 * @returns {ReadinessCheck}
 */
export function redisCheck(redis, name = 'redis') {
  return {
    name,
    async check() {
      // A connection known to be down fails at once; a PING would wait in the offline queue.
      if (redis.status !== 'ready') throw new Error(`connection is ${redis.status}`);
      await redis.ping();
    }
  };
}

/**
 * PostgreSQL answers a query from the process's pool.
 * @param {import('pg').Pool} pool
 * @returns {ReadinessCheck}
 */
export function postgresCheck(pool) {
  return { name: 'postgres', timeoutMs: 3000, cacheMs: 5000, check: async () => { await pool.query('SELECT 1'); } };
}

/**
 * SNS is reachable. Evidence first: an answer to one of this process's own publishes in
 * the last 30 s (any HTTP status). Otherwise an unsigned HTTPS GET of the endpoint: AWS
 * answers it with an error document, which proves DNS, the route and TLS work, needs no
 * IAM permission (workers only have sns:Publish) and uses no publish quota; any HTTP
 * status counts as reachable. Against AWS the result is kept 30 s.
 * @param {{ region: string, endpoint?: string }} sns config.sns
 * @param {{ lastAnswerAt?: () => number | null }} [evidence] from instrumentSnsClient
 * @returns {ReadinessCheck}
 */
export function snsCheck(sns, { lastAnswerAt = () => null } = {}) {
  const url = sns.endpoint ?? `https://sns.${sns.region}.amazonaws.com/`;
  return {
    name: 'sns',
    timeoutMs: 3000,
    cacheMs: sns.endpoint ? 5000 : 30_000,
    async check() {
      const last = lastAnswerAt();
      if (last !== null && Date.now() - last < 30_000) return;
      const answer = await fetch(url, { signal: AbortSignal.timeout(2500) })
        .catch((error) => { throw new Error(`${redactUrl(url)}: ${error.cause?.code ?? error.message}`); });
      await answer.body?.cancel();
    }
  };
}

/**
 * Runs checks with their timeouts and caches.
 * @param {ReadinessCheck[]} checks
 */
export function createReadiness(checks) {
  const state = checks.map((c) => ({
    ...c,
    /** @type {{ at: number, result: CheckResult } | null} */
    last: null,
    /** @type {Promise<CheckResult> | null} */
    running: null,
    /** @type {Promise<void> | null} the probe itself, which may outlive its timeout */
    probe: null
  }));

  /** @param {typeof state[number]} s @returns {Promise<CheckResult>} */
  async function run(s) {
    const started = performance.now();
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    const timeoutMs = s.timeoutMs ?? 1500;
    try {
      // A probe stuck on a dead dependency (a PING in ioredis's offline queue) is awaited
      // again rather than joined by a new one each time.
      s.probe ??= s.check().finally(() => { s.probe = null; });
      await Promise.race([s.probe, new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      })]);
      return { name: s.name, ok: true, ms: Math.round(performance.now() - started) };
    } catch (error) {
      const e = /** @type {any} */ (error);
      return { name: s.name, ok: false, ms: Math.round(performance.now() - started), error: String(e?.message || e?.code || e).slice(0, 200) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** @param {typeof state[number]} s @returns {Promise<CheckResult>} */
  function evaluateOne(s) {
    if (s.last && Date.now() - s.last.at < (s.cacheMs ?? 1000)) return Promise.resolve(s.last.result);
    // One probe at a time: a slow one is shared, and one stuck on a dead dependency never piles up.
    s.running ??= run(s).then((result) => {
      s.last = { at: Date.now(), result };
      s.running = null;
      return result;
    });
    return s.running;
  }

  return {
    names: state.map((s) => s.name),
    /** Every check's result; ok when all pass. */
    async evaluate() {
      const results = await Promise.all(state.map(evaluateOne));
      return { ok: results.every((r) => r.ok), checks: results };
    }
  };
}

/** @typedef {ReturnType<typeof createReadiness>} Readiness */
