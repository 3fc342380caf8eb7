// (b) A 1,000,000-device audience enqueued by `pushctl send`, from a file and from
// PostgreSQL: wall time and the pushctl process's peak RSS. The file is enqueued in
// rounds with each CSV parser in turn (the hand-written shared/audience/csv-source.js and
// csv-parse, through bench/csv-parser-hook.js), interleaved so that the machine's slow
// and fast phases fall on both.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { benchPushctl, median } from './support.js';
import { dropPrefix } from './publish-throughput.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CSV_PARSE_HOOK = fileURLToPath(new URL('./csv-parser-hook.js', import.meta.url));

/** @typedef {{ enqueued: number, seconds: number, maxRssMb: number }} EnqueueRun */

/** @param {{ devices?: number, rounds?: number }} [options] */
export async function benchEnqueue({ devices = 1_000_000, rounds = 3 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'pushpace-bench-'));
  const message = join(dir, 'message.json');
  await writeFile(message, JSON.stringify({ title: 'Hi', body: 'Hello', locales: { fi: { title: 'Hei', body: 'Moi' } } }));
  const schema = `bench_${randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  try {
    const audience = join(dir, 'audience.csv');
    await writeAudience(audience, devices);
    /** @type {Array<{ hand: EnqueueRun, csvParse: EnqueueRun }>} */
    const parsers = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so neither always follows the other's garbage and page cache.
      const first = round % 2 === 0;
      const a = await timedSend(['--audience', audience], message, first ? [] : ['--import', CSV_PARSE_HOOK]);
      const b = await timedSend(['--audience', audience], message, first ? ['--import', CSV_PARSE_HOOK] : []);
      parsers.push(first ? { hand: a, csvParse: b } : { hand: b, csvParse: a });
    }
    const file = medianRun(parsers.map((x) => x.hand));

    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(`CREATE TABLE ${schema}.devices AS
      SELECT i AS id, 'user-' || i AS user_id,
             'arn:aws:sns:us-east-1:123456789012:endpoint/' || (CASE WHEN i % 3 = 0 THEN 'APNS' ELSE 'GCM' END) ||
               '/bench/' || lpad(i::text, 8, '0') || '-0000-4000-8000-000000000000' AS endpoint_arn,
             CASE WHEN i % 3 = 0 THEN 'APNS' ELSE 'GCM' END AS platform,
             CASE WHEN i % 2 = 0 THEN 'fi' ELSE 'en' END AS locale
      FROM generate_series(1, ${devices}) AS i`);
    const query = await timedSend(['--query', `SELECT endpoint_arn, platform, user_id, locale FROM ${schema}.devices`], message);
    return { devices, file, query, parsers, csvParse: medianRun(parsers.map((x) => x.csvParse)) };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await pool.end();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The median of each measure over runs (wall time and RSS taken separately).
 * @param {EnqueueRun[]} runs
 * @returns {EnqueueRun}
 */
function medianRun(runs) {
  return { enqueued: Math.min(...runs.map((x) => x.enqueued)), seconds: median(runs.map((x) => x.seconds)), maxRssMb: median(runs.map((x) => x.maxRssMb)) };
}

/**
 * @param {string[]} sourceArgs
 * @param {string} message
 * @param {string[]} [extraNodeArgs] --import of the csv-parse hook, for that parser's runs
 * @returns {Promise<EnqueueRun>}
 */
async function timedSend(sourceArgs, message, extraNodeArgs = []) {
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const started = process.hrtime.bigint();
  // As users run it: the bin's shebang and `npm run pushctl` both carry this heap cap.
  const run = await benchPushctl(['send', ...sourceArgs, '--message', message, '--yes', '--json'],
    { KEY_PREFIX: prefix, LOG_LEVEL: 'warn', DATABASE_URL }, ['--max-old-space-size=128', ...extraNodeArgs]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await dropPrefix(prefix);
  if (run.code !== 0) throw new Error(`pushctl send ${sourceArgs[0]} failed: ${run.stderr}`);
  const { devices } = JSON.parse(run.stdout);
  const parser = extraNodeArgs.length > 0 ? ' (csv-parse)' : '';
  console.error(`enqueue ${sourceArgs[0]}${parser}: ${devices} devices in ${seconds.toFixed(1)} s, peak RSS ${run.maxRssMb.toFixed(0)} MB`);
  return { enqueued: devices, seconds, maxRssMb: run.maxRssMb };
}

/** @param {string} path @param {number} devices */
async function writeAudience(path, devices) {
  const out = createWriteStream(path);
  out.write('endpointArn,platform,userId,locale\n');
  for (let i = 1; i <= devices; i++) {
    const platform = i % 3 === 0 ? 'APNS' : 'GCM';
    const line = `arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/bench/${String(i).padStart(8, '0')}-0000-4000-8000-000000000000,${platform},user-${i},${i % 2 ? 'en' : 'fi'}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}
