// Shared pieces of the benchmarks: child processes, the emulator's stats, RSS.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { runPushctl } from '../scripts/run-pushctl.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Preloaded into a measured child: reports its peak RSS on exit. */
export const RSS_REPORTER = fileURLToPath(new URL('./report-rss.js', import.meta.url));

/**
 * Runs node with args; resolves { code, stdout, stderr, maxRssMb }.
 * @param {string[]} args
 * @param {Record<string, string | undefined>} env
 */
export async function runNode(args, env) {
  const child = spawn(process.execPath, ['--import', RSS_REPORTER, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
  child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  const [code] = await once(child, 'exit');
  return { code, stdout, stderr, maxRssMb: rssMbOf(stderr) };
}

/**
 * Runs pushctl (scripts/run-pushctl.js) with `env` added to this process's; resolves
 * { code, stdout, stderr, maxRssMb }.
 * @param {string[]} args
 * @param {Record<string, string | undefined>} env
 * @param {string[]} [nodeArgs] node's own options (the heap cap users run it with)
 */
export async function benchPushctl(args, env, nodeArgs = []) {
  const run = await runPushctl(args, { env: { ...process.env, ...env }, nodeArgs: ['--import', RSS_REPORTER, ...nodeArgs] });
  return { ...run, maxRssMb: rssMbOf(run.stderr) };
}

/** The peak RSS report-rss.js wrote on a child's stderr, in MB. @param {string} stderr */
function rssMbOf(stderr) {
  const rss = /maxRssKb=(\d+)/.exec(stderr);
  return rss ? Number(rss[1]) / 1024 : NaN;
}

/**
 * Starts a long-running node process (emulator, worker).
 * @param {string[]} args
 * @param {Record<string, string | undefined>} env
 * @param {RegExp} [readyWhen] a line on stdout that says it is ready
 */
export async function startNode(args, env, readyWhen) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c) => { output = (output + c).slice(-20_000); });
  if (readyWhen) {
    for (let i = 0; !readyWhen.test(output); i++) {
      if (child.exitCode !== null || i > 300) throw new Error(`${args.join(' ')} did not start: ${output}`);
      await sleep(50);
    }
  }
  return {
    child,
    /** The last 20,000 characters it wrote on stdout. */
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return; // exited, or killed
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  };
}

/** @param {string} url */
export async function emulatorStats(url) {
  return /** @type {{ published: number, firstAt: number, lastAt: number, maxPerSecond: number, requests: number }} */ (
    await (await fetch(`${url}/_emulator/stats`)).json());
}

/** @param {string} url */
export async function resetEmulator(url) {
  await fetch(`${url}/_emulator/reset`, { method: 'POST' });
}

/** Median of numbers. @param {number[]} values */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A made-up GCM endpoint ARN: device `i` of app `app`. @param {string} app @param {number} i */
export function benchArn(app, i) {
  return `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/${app}/${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
}

/**
 * A temporary folder with a campaign's files: an audience of `devices` endpoints of `app`
 * (CSV) and a message. remove() deletes the folder.
 * @param {number} devices @param {string} app @param {{ title: string, body: string }} [message]
 */
export async function writeCampaignFiles(devices, app, message = { title: 'Sale', body: 'Everything 20% off' }) {
  const dir = await mkdtemp(join(tmpdir(), 'pushpace-bench-'));
  const files = { audience: join(dir, 'audience.csv'), message: join(dir, 'message.json') };
  const lines = ['endpointArn,platform'];
  for (let i = 0; i < devices; i++) lines.push(`${benchArn(app, i)},GCM`);
  await writeFile(files.audience, lines.join('\n') + '\n');
  await writeFile(files.message, JSON.stringify(message));
  return { ...files, remove: () => rm(dir, { recursive: true, force: true }) };
}
