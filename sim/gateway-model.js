// The simulated API gateway: Node processes behind Heroku's router, with a latency that
// rises as the load nears capacity and a 30 s timeout past which requests fail.
//
// Model (docs/simulator.md): `processes` single-threaded Node processes, each spending
// `serviceMs` of CPU per request (exponentially distributed), plus `downstreamMs` of
// waiting on the services behind the gateway, which costs no gateway CPU. Heroku's router
// assigns requests to dynos at random, so each process is an M/M/1 queue with arrival rate
// λ/processes; its sojourn time is exponential with rate (1 - ρ)/s, ρ = λ/μ and
// μ = processes/s, so
//
//   latency quantile q = downstreamMs + s · ln(1/(1-q)) / (1 - ρ)
//
// The stationary formula holds while ρ < 1 and the queue has time to settle (its
// relaxation time is a few seconds here). Beyond capacity a fluid backlog Q builds at
// λ - μ requests/s and adds Q/μ of waiting to every request; requests that would wait past
// the router's timeout fail (Heroku's router gives up after 30 s). A noisy neighbour on a
// shared dyno steals CPU: a capacity factor f stretches the service time to s/f.
//
// `queueing: 'shared'` instead models one queue in front of all the processes (a router that
// sends each request to a free process, like a single accept queue): an M/M/c queue. The
// wait is 0 with probability 1 - P_w (Erlang C) and otherwise exponential with rate
// c·(1 - ρ)/s, and the sojourn time adds an exponential service time of mean s:
//
//   P(T > x) = (1 - P_w)·e^(-x/s) + P_w·(θ·e^(-x/s) - μ·e^(-θx)) / (θ - μ),  θ = c(1-ρ)/s, μ = 1/s
//
// With many processes its knee is much sharper than random routing's: the p95 stays low
// up to a high utilisation and then climbs steeply, which is harder for a controller that
// learns the knee from latency.

/**
 * @typedef {object} GatewayConfig
 * @property {number} processes       Node processes serving requests (e.g. 4 dynos × 5 processes)
 * @property {number} serviceMs       mean CPU time per request in one process
 * @property {number} downstreamMs    latency added by the services behind the gateway
 * @property {number} timeoutSeconds  requests waiting longer fail (Heroku's router: 30 s)
 * @property {'per-process' | 'shared'} [queueing]  random routing to per-process M/M/1 queues (default), or one M/M/c queue
 */

/** @param {GatewayConfig} config */
export function createGatewayModel({ processes, serviceMs, downstreamMs, timeoutSeconds, queueing = 'per-process' }) {
  const shared = queueing === 'shared';
  /**
   * P(sojourn > x ms) at utilisation ρ and mean service time s (ms), before any backlog wait.
   * @param {number} x
   * @param {number} rho
   * @param {number} s
   * @param {number} waitShare  Erlang C's P_w at ρ (shared queueing only; see waitProbability)
   */
  function tail(x, rho, s, waitShare) {
    if (x <= 0) return 1;
    if (!shared) return Math.exp(-(x * (1 - rho)) / s);
    const mu = 1 / s;
    const theta = (processes * (1 - rho)) / s;
    const service = Math.exp(-x * mu);
    const both = Math.abs(theta - mu) < 1e-9 * mu ? (1 + mu * x) * service : (theta * service - mu * Math.exp(-theta * x)) / (theta - mu);
    return (1 - waitShare) * service + waitShare * both;
  }
  /** Erlang C: the probability that a request waits, from Erlang B's stable recursion. @param {number} rho */
  function waitProbability(rho) {
    if (!shared) return 0;
    const load = rho * processes;
    let b = 1;
    for (let k = 1; k <= processes; k++) b = (load * b) / (k + load * b);
    return (processes * b) / (processes - load * (1 - b));
  }
  /** A latency that the q-quantile does not exceed (a bisection's upper end). @param {number} rho @param {number} s @param {number} q */
  function quantileBound(rho, s, q) {
    if (!shared) return (s * Math.log(1 / (1 - q))) / (1 - rho);
    // P(S > a) and P(W > b) each at most (1 - q)/2, so P(S + W > a + b) ≤ 1 - q.
    return s * Math.log(2 / (1 - q)) * (1 + 1 / (processes * (1 - rho)));
  }
  /** The q-quantile of the stationary sojourn time, in ms. @param {number} rho @param {number} s @param {number} q */
  function sojournQuantile(rho, s, q) {
    if (!shared) return (s * Math.log(1 / (1 - q))) / (1 - rho);
    const w = waitProbability(rho);
    let lo = 0;
    let hi = quantileBound(rho, s, q);
    for (let i = 0; i < 60; i++) {
      const x = (lo + hi) / 2;
      if (tail(x, rho, s, w) > 1 - q) lo = x; else hi = x;
    }
    return (lo + hi) / 2;
  }

  /** Requests per second the gateway completes at full CPU, given a capacity factor. @param {number} factor */
  const capacityRps = (factor) => (processes * 1000 * factor) / serviceMs;

  /** Utilisation above which the stationary formula is capped (the backlog takes over). */
  const RHO_CAP = 0.98;

  /**
   * One second of the gateway.
   * @param {{ arrivals: number, factor: number, backlog: number }} state
   * @returns {{ backlog: number, delayMs: number, rho: number, serviceMs: number, errors: number, completed: number }}
   *   completed: responses sent this second, failures included (what a Prometheus request
   *   counter counts: it increments when a request finishes, so under overload it shows the
   *   throughput, not the arrivals)
   */
  function step({ arrivals, factor, backlog }) {
    const mu = capacityRps(factor);
    const s = serviceMs / factor;
    let end = backlog + arrivals - mu;
    let errors = 0;
    const maxBacklog = timeoutSeconds * mu;
    if (end > maxBacklog) { errors += end - maxBacklog; end = maxBacklog; }
    end = Math.max(0, end);
    const delayMs = ((backlog + end) / 2 / mu) * 1000;
    const rho = Math.min(RHO_CAP, arrivals / mu);
    // Requests that do get a place but whose exponential tail still crosses the timeout.
    const slack = timeoutSeconds * 1000 - downstreamMs - delayMs;
    const late = slack <= 0 ? 1 : tail(slack, rho, s, waitProbability(rho));
    errors += Math.max(0, arrivals - errors) * late;
    return { backlog: end, delayMs, rho, serviceMs: s, errors, completed: backlog + arrivals - end };
  }

  /**
   * The q-quantile of latency over several seconds, each weighted by its requests: solves
   * Σ A_i · P(latency_i > x) = (1 - q) · Σ A_i by bisection.
   * @param {{ arrivals: Float64Array, delayMs: Float64Array, rho: Float64Array, serviceMs: Float64Array }} seconds
   * @param {number} from  first second (index)
   * @param {number} to    one past the last
   * @param {number} q
   */
  function windowQuantile({ arrivals, delayMs, rho, serviceMs: service }, from, to, q) {
    let total = 0;
    let lo = Infinity;
    let hi = 0;
    const logTail = Math.log(1 / (1 - q));
    const waits = new Float64Array(to - from);
    for (let i = from; i < to; i++) {
      total += arrivals[i];
      const start = downstreamMs + delayMs[i];
      lo = Math.min(lo, start);
      hi = Math.max(hi, start + (shared ? quantileBound(rho[i], service[i], q) : (service[i] * logTail) / (1 - rho[i])));
      waits[i - from] = waitProbability(rho[i]);
    }
    if (total <= 0) return downstreamMs;
    const target = (1 - q) * total;
    for (let it = 0; it < 50; it++) {
      const x = (lo + hi) / 2;
      let over = 0;
      for (let i = from; i < to; i++) {
        const start = downstreamMs + delayMs[i];
        over += arrivals[i] * (x <= start ? 1 : shared ? tail(x - start, rho[i], service[i], waits[i - from]) : Math.exp(-((x - start) * (1 - rho[i])) / service[i]));
      }
      if (over > target) lo = x; else hi = x;
    }
    return (lo + hi) / 2;
  }

  /**
   * The share of a window's requests slower than `x` ms: the window's q-quantile exceeds x
   * exactly when this exceeds 1 - q (what windowQuantile bisects on), without the bisection.
   * @param {{ arrivals: Float64Array, delayMs: Float64Array, rho: Float64Array, serviceMs: Float64Array }} seconds
   * @param {number} from
   * @param {number} to
   * @param {number} x
   */
  function windowExceedance({ arrivals, delayMs, rho, serviceMs: service }, from, to, x) {
    let total = 0;
    let over = 0;
    for (let i = from; i < to; i++) {
      total += arrivals[i];
      over += arrivals[i] * tail(x - downstreamMs - delayMs[i], rho[i], service[i], waitProbability(rho[i]));
    }
    return total > 0 ? over / total : 0;
  }

  /**
   * The steady request rate at which the stationary p95 equals `p95Ms`, for a capacity factor.
   * @param {number} factor
   * @param {number} p95Ms
   */
  function rateAtP95(factor, p95Ms) {
    const s = serviceMs / factor;
    if (p95Ms <= downstreamMs) return 0;
    if (!shared) return Math.max(0, capacityRps(factor) * (1 - (s * Math.log(20)) / (p95Ms - downstreamMs)));
    // M/M/c has no closed form: bisect on ρ, and remember the answer (the oracle asks per second).
    const key = `${factor}:${p95Ms}`;
    let rate = rateCache.get(key);
    if (rate === undefined) {
      let lo = 0;
      let hi = RHO_CAP;
      if (downstreamMs + sojournQuantile(0, s, 0.95) >= p95Ms) hi = 0;
      for (let i = 0; i < 50 && hi > 0; i++) {
        const rho = (lo + hi) / 2;
        if (downstreamMs + sojournQuantile(rho, s, 0.95) < p95Ms) lo = rho; else hi = rho;
      }
      rate = capacityRps(factor) * lo;
      rateCache.set(key, rate);
    }
    return rate;
  }
  /** @type {Map<string, number>} */
  const rateCache = new Map();

  /** Stationary q-quantile at a steady rate. @param {number} rps @param {number} factor @param {number} q */
  function stationaryQuantile(rps, factor, q) {
    const rho = Math.min(RHO_CAP, rps / capacityRps(factor));
    return downstreamMs + sojournQuantile(rho, serviceMs / factor, q);
  }

  return { capacityRps, step, windowQuantile, windowExceedance, rateAtP95, stationaryQuantile };
}

/** @typedef {ReturnType<typeof createGatewayModel>} GatewayModel */
