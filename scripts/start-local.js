#!/usr/bin/env node
// `npm start`: the whole pipeline on local defaults. Starts the SNS emulator
// (unless one already answers), a worker and the web dashboard, sends the example campaign in
// examples/ and shows its progress until it completes. Needs only a local Redis.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../config/index.js';
import { createRedis, assertRedisReachable } from '../shared/redis.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const config = loadConfig(process.env);
/** @type {import('node:child_process').ChildProcess[]} */
const children = [];
let stopping = false;
process.on('SIGINT', () => void stopAll(130));
process.on('SIGTERM', () => void stopAll(143));

try {
  await checkRedis();
  if (config.sns.emulator && !(await emulatorAnswers())) {
    children.push(start('sns-emulator', 'emulator/main.js'));
    await waitUntil(emulatorAnswers, 'the SNS emulator to answer');
  }
  children.push(start('worker', 'workers/worker.js'));
  children.push(start('web', 'producers/web.js'));
  console.error(`dashboard: http://127.0.0.1:${config.port}/ (stops with the campaign)`);
  const send = await run(['producers/pushctl.js', 'send', '--audience', 'examples/audience.csv',
    '--message', 'examples/announcement.json', '--name', 'example announcement', '--yes']);
  const id = send.trim().split('\n').pop();
  console.error(`\nwatching campaign ${id} (Ctrl-C stops everything)\n`);
  await run(['producers/pushctl.js', 'status', String(id), '--watch'], 'inherit');
  await run(['producers/pushctl.js', 'status', String(id)], 'inherit');
  if (config.sns.emulator) {
    const stats = /** @type {any} */ (await (await fetch(`${config.sns.endpoint}/_emulator/stats`)).json());
    console.error(`\nSNS emulator: ${stats.published} publishes recorded, ${stats.distinctTargets} distinct endpoints, ` +
      `max ${stats.maxPerSecond} in any 1-second window`);
  }
  await stopAll(0);
} catch (error) {
  console.error(`npm start: ${/** @type {Error} */ (error).message}`);
  await stopAll(1);
}

async function checkRedis() {
  const redis = createRedis(config.redis, { failFast: true });
  try {
    await assertRedisReachable(redis, config.redis);
  } finally {
    redis.disconnect();
  }
}

async function emulatorAnswers() {
  try {
    return (await fetch(`${config.sns.endpoint}/_emulator/healthz`)).ok;
  } catch {
    return false;
  }
}

/** @param {() => Promise<boolean>} probe @param {string} what */
async function waitUntil(probe, what) {
  for (let i = 0; i < 100; i++) {
    if (await probe()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A long-running process type; its JSON logs go to stderr-side so the progress bar stays readable.
 * @param {string} name @param {string} file
 */
function start(name, file) {
  const child = spawn(process.execPath, [file], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' } });
  child.on('exit', (code, signal) => { if (!stopping) console.error(`${name} exited (${code ?? signal})`); });
  return child;
}

/**
 * Runs a command to completion; returns its stdout unless inherited.
 * @param {string[]} args @param {'pipe' | 'inherit'} [stdout]
 */
async function run(args, stdout = 'pipe') {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['inherit', stdout, 'inherit'] });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk) => { out += chunk; });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`${args.slice(0, 2).join(' ')} exited with ${code}`);
  return out;
}

/** @param {number} code */
async function stopAll(code) {
  stopping = true;
  await Promise.all(children.map(async (child) => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }));
  process.exit(code);
}
