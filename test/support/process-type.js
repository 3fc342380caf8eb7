// Runs a Procfile process type as a child process for tests and finds the ports it
// listens on from its JSON log (tests set PORT=0 and METRICS_PORT=0: any free port).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './harness.js';

/**
 * Spawns `entry` (e.g. producers/web.js); resolves once its log says `readyMessage`.
 * @param {string} entry  path from the repository root
 * @param {Record<string, string>} env
 * @param {string} readyMessage  the `msg` of the log line that means it has started
 */
export async function startProcessType(entry, env, readyMessage) {
  const child = spawn(process.execPath, [join(ROOT, entry)], { cwd: ROOT, env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // The JSON log is read from stdout alone: a stderr chunk could land inside one of its lines.
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk; stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
  const logLines = () => jsonLines(stdout);
  const deadline = Date.now() + 15_000;
  while (!logLines().some((line) => line.msg === readyMessage)) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}: ${output}`);
    if (Date.now() > deadline) throw new Error(`${entry} did not log "${readyMessage}": ${output}`);
    await sleep(25);
  }
  return {
    child,
    output: () => output,
    logLines,
    /**
     * The port of the log line with message `msg`.
     * @param {string} msg
     */
    port(msg) {
      const line = logLines().find((l) => l.msg === msg);
      if (!line?.port) throw new Error(`${entry} logged no "${msg}" with a port: ${output}`);
      return /** @type {number} */ (line.port);
    },
    /** The port of /metrics, /healthz and /readyz (METRICS_PORT). */
    get opsPort() {
      return this.port('metrics and health server listening');
    },
    /** SIGTERM, then SIGKILL after 30 s; resolves with the exit code. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const [code] = await once(child, 'exit');
      clearTimeout(timer);
      return code;
    }
  };
}

/** The METRICS_PORT of a worker started by harness.js startWorker, from its log. @param {string} output */
export function opsPortOf(output) {
  const line = jsonLines(output).find((entry) => entry.msg === 'metrics and health server listening');
  if (!line?.port) throw new Error(`no "metrics and health server listening" line: ${output}`);
  return /** @type {number} */ (line.port);
}

/**
 * The JSON log lines in a child's output so far. Only complete lines: output arrives in
 * chunks, and the last line may still be half-written.
 * @param {string} output
 * @returns {Record<string, any>[]}
 */
function jsonLines(output) {
  /** @type {Record<string, any>[]} */
  const lines = [];
  for (const line of output.slice(0, output.lastIndexOf('\n') + 1).split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line));
    } catch {
      // Not a log line (another writer's output that starts with a brace).
    }
  }
  return lines;
}
