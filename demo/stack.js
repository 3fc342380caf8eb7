// The demo's child processes, started as the Procfile would run them: a gateway, workers
// (workers/worker.js), the governor (workers/governor.js) and pushctl, each configured only
// through its environment. Their output is kept (the last lines, for errors) and, for the
// governor, parsed: each "governor tick" JSON line is one decision.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { runPushctl } from '../scripts/run-pushctl.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TAIL_LINES = 40;

/**
 * @typedef {object} Child
 * @property {import('node:child_process').ChildProcess} child
 * @property {() => string} tail       its last output lines
 * @property {() => Promise<void>} stop  SIGTERM, then SIGKILL after 30 s; resolves once it exited
 */

/**
 * Spawns `node file ...args`; calls onLine for each stdout line.
 * @param {string} name
 * @param {string[]} args  the script and its arguments, relative to the repo
 * @param {Record<string, string | undefined>} env
 * @param {(line: string) => void} [onLine]
 * @returns {Child}
 */
export function spawnNode(name, args, env, onLine) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  /** @type {string[]} */
  const lines = [];
  let partial = '';
  const keep = (/** @type {string} */ line) => {
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
  };
  child.stdout?.setEncoding('utf8').on('data', (/** @type {string} */ chunk) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      keep(line);
      onLine?.(line);
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (/** @type {string} */ chunk) => { for (const line of chunk.split('\n')) if (line) keep(line); });
  return {
    child,
    tail: () => `${name}: ${lines.join('\n')}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
  };
}

/**
 * Waits until `ready()` is true, failing early if the process exits.
 * @param {Child} proc
 * @param {() => boolean} ready
 * @param {string} what
 * @param {number} [timeoutMs]
 */
export async function waitForReady(proc, ready, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (proc.child.exitCode !== null) throw new Error(`${what}: exited with ${proc.child.exitCode}\n${proc.tail()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms\n${proc.tail()}`);
    await sleep(25);
  }
}

/**
 * A demo gateway in its own process (the modelled one or the real one, whose CPU is then its
 * own); resolves its URL.
 * @param {import('./settings.js').DemoWorld['gateway']} settings
 * @param {Record<string, string | undefined>} env
 * @param {string} databaseUrl  the real gateway's PostgreSQL
 */
export async function startGateway(settings, env, databaseUrl) {
  /** @type {string | null} */
  let url = null;
  const options = settings.kind === 'real' ? { ...settings, databaseUrl } : settings;
  const proc = spawnNode('gateway', ['demo/gateway-main.js', JSON.stringify(options)], env, (line) => {
    if (line.startsWith('{"url"')) url = JSON.parse(line).url;
  });
  await waitForReady(proc, () => url !== null, `the ${settings.kind} demo gateway`);
  return { ...proc, url: /** @type {string} */ (/** @type {unknown} */ (url)) };
}

/**
 * A worker process; resolves once it consumes segments.
 * @param {Record<string, string | undefined>} env
 */
export async function startWorker(env) {
  let consuming = false;
  const proc = spawnNode('worker', ['workers/worker.js'], { ...env, LOG_LEVEL: 'info' }, (line) => {
    if (line.includes('worker consuming segments')) consuming = true;
  });
  await waitForReady(proc, () => consuming, 'a worker');
  return proc;
}

/**
 * The governor process; `onTick` gets each decision it logs.
 * @param {Record<string, string | undefined>} env
 * @param {(tick: GovernorTick) => void} onTick
 */
export async function startGovernor(env, onTick) {
  let started = false;
  const proc = spawnNode('governor', ['workers/governor.js'], { ...env, LOG_LEVEL: 'info' }, (line) => {
    if (!line.startsWith('{')) return;
    /** @type {any} */
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (entry.msg === 'governor lease acquired: steering the rate') started = true;
    if (entry.msg !== 'governor tick') return;
    const s = entry.snapshot ?? {};
    onTick({
      at: entry.now ?? Date.parse(entry.time), rate: entry.rate, reason: entry.reason, sent: entry.sent, gateway: entry.gateway ?? null,
      remaining: entry.remaining ?? null,
      capacity: s.capacity ?? null,
      model: { baseline: s.baseline, requestsPerSend: s.requestsPerSend, requestsPerSendSd: s.requestsPerSendSd, uncertaintyRps: s.uncertaintyRps,
        maxUnitLoad: s.maxUnitLoad, plausibleModels: s.plausibleModels, baseLatencyMs: s.baseLatencyMs,
        latencyNoise: s.latencyNoise, missTrim: s.missTrim, capacityTrial: s.capacityTrial, capacityEdge: s.capacityEdge,
        capacityEnvelope: s.capacityEnvelope, medianFactor: s.medianFactor, sigmaFactor: s.sigmaFactor, planned: s.planned }
    });
  });
  await waitForReady(proc, () => started, 'the governor');
  return proc;
}

/**
 * @typedef {object} GovernorTick  one decision, as the governor logged it
 * @property {number} at        ms since the epoch
 * @property {number} rate      sends/s written to the bucket
 * @property {string} reason
 * @property {number} sent      sends since its previous tick
 * @property {number | null} remaining  devices the running campaigns still had to send, as the governor told its controller
 * @property {{ p95Ms: number, p99Ms: number, errorRatio: number, rps: number | null } | null} gateway  what it read (rps null: a source without the load, the probe)
 * @property {number | null} capacity  its estimate of the gateway's requests/s at the setpoint
 * @property {Record<string, number | undefined>} model  the controller's other estimates (its snapshot), for the summary
 */

/**
 * Runs pushctl to completion.
 * @param {string[]} args
 * @param {Record<string, string | undefined>} env
 */
export async function pushctl(args, env) {
  const { code, stdout, stderr } = await runPushctl(args, { env });
  if (code !== 0) throw new Error(`pushctl ${args[0]} exited with ${code}: ${stderr.trim()}`);
  return stdout;
}
