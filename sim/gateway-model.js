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

/**
 * @typedef {object} GatewayConfig
 * @property {number} processes       Node processes serving requests (e.g. 4 dynos × 5 processes)
 * @property {number} serviceMs       mean CPU time per request in one process
 * @property {number} downstreamMs    latency added by the services behind the gateway
 * @property {number} timeoutSeconds  requests waiting longer fail (Heroku's router: 30 s)
 */

/** @param {GatewayConfig} config */
export function createGatewayModel({ processes, serviceMs, downstreamMs, timeoutSeconds }) {
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
    const tail = slack <= 0 ? 1 : Math.exp(-(slack * (1 - rho)) / s);
    errors += Math.max(0, arrivals - errors) * tail;
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
    for (let i = from; i < to; i++) {
      total += arrivals[i];
      const start = downstreamMs + delayMs[i];
      lo = Math.min(lo, start);
      hi = Math.max(hi, start + (service[i] * logTail) / (1 - rho[i]));
    }
    if (total <= 0) return downstreamMs;
    const target = (1 - q) * total;
    for (let it = 0; it < 50; it++) {
      const x = (lo + hi) / 2;
      let over = 0;
      for (let i = from; i < to; i++) {
        const start = downstreamMs + delayMs[i];
        over += arrivals[i] * (x <= start ? 1 : Math.exp(-((x - start) * (1 - rho[i])) / service[i]));
      }
      if (over > target) lo = x; else hi = x;
    }
    return (lo + hi) / 2;
  }

  /**
   * The steady request rate at which the stationary p95 equals `p95Ms`, for a capacity factor.
   * @param {number} factor
   * @param {number} p95Ms
   */
  function rateAtP95(factor, p95Ms) {
    const s = serviceMs / factor;
    if (p95Ms <= downstreamMs) return 0;
    return Math.max(0, capacityRps(factor) * (1 - (s * Math.log(20)) / (p95Ms - downstreamMs)));
  }

  /** Stationary q-quantile at a steady rate. @param {number} rps @param {number} factor @param {number} q */
  function stationaryQuantile(rps, factor, q) {
    const rho = Math.min(RHO_CAP, rps / capacityRps(factor));
    return downstreamMs + ((serviceMs / factor) * Math.log(1 / (1 - q))) / (1 - rho);
  }

  return { capacityRps, step, windowQuantile, rateAtP95, stationaryQuantile };
}

/** @typedef {ReturnType<typeof createGatewayModel>} GatewayModel */
