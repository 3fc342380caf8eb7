// WEB_CONCURRENCY runs several worker processes per dyno; SIGTERM stops them all cleanly.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { uniquePrefix, dropPrefix, startEmulator, testEnv, startWorker, waitFor } from '../support/harness.js';

const prefix = uniquePrefix();
after(() => dropPrefix(prefix));

test('WEB_CONCURRENCY=2 forks two consuming processes and SIGTERM exits 0', { timeout: 60_000 }, async () => {
  const { emulator, url } = await startEmulator();
  try {
    const worker = await startWorker(testEnv({ prefix, snsUrl: url, WEB_CONCURRENCY: 2 }));
    const consuming = () => [...worker.output().matchAll(/"pid":(\d+)[^\n]*worker consuming segments/g)].map((m) => m[1]);
    await waitFor(async () => consuming().length === 2, { what: 'two cluster workers', timeoutMs: 20_000 });
    assert.equal(new Set(consuming()).size, 2, 'two different processes');
    assert.ok(!consuming().includes(String(worker.child.pid)), 'the primary only supervises');
    const started = Date.now();
    worker.child.kill('SIGTERM');
    const [code] = await once(worker.child, 'exit');
    assert.equal(code, 0);
    assert.ok(Date.now() - started < 25_000);
    assert.equal(worker.output().match(/stopped cleanly/g)?.length, 2, 'each child closed its connections');
  } finally {
    await emulator.close();
  }
});

test('a worker with a bad environment variable exits 2 naming it, before connecting anywhere', async () => {
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync(process.execPath, [new URL('../../workers/worker.js', import.meta.url).pathname],
    { env: { PATH: process.env.PATH, WORKER_CONCURRENCY: 'many' }, encoding: 'utf8', timeout: 10_000 });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /^worker: WORKER_CONCURRENCY must be a whole number/);
});
