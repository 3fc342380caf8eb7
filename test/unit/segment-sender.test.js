// The segment sender against in-memory fakes of the store, the bucket and SNS: when it
// may publish (release times, deadlines), on the real clock but over a second or less.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createSegmentSender } from '../../shared/sending/segment-sender.js';

/**
 * A sender whose bucket grants every token and whose SNS delivers every publish.
 * @param {{ deadlineAt?: number | null }} [campaign]
 */
function fakeSender({ deadlineAt = null } = {}) {
  /** @type {number[]} */
  const publishedAt = [];
  /** @type {{ seq: number, outcome: string }[]} */
  const recorded = [];
  /** @type {number[]} */
  const finished = [];
  const store = {
    get: async () => ({ id: 'c-1', state: 'running', message: { title: 'Hi', body: 'There' }, outcomeBits: 3, deadlineAt }),
    claimSegment: async () => 'pass',
    /** @param {string} _id @param {number} _first @param {number} count */
    doneFlags: async (_id, _first, count) => new Array(count).fill(false),
    /** @param {string} _id @param {{ seq: number, outcome: string }[]} outcomes */
    recordOutcomes: async (_id, outcomes) => { recorded.push(...outcomes); return outcomes.length; },
    /** @param {string} _id @param {number} index */
    finishSegment: async (_id, index) => { finished.push(index); return 'running'; }
  };
  const bucket = {
    /** @param {string} _id @param {number} want */
    take: async (_id, want) => ({ granted: want, waitMs: 0, state: 'running' })
  };
  const sns = { publish: async () => { publishedAt.push(Date.now()); return { kind: 'delivered', messageId: `m-${publishedAt.length}` }; } };
  const sender = createSegmentSender(/** @type {any} */ ({
    store, bucket, sns, logger: pino({ level: 'silent' }), config: { publishConcurrency: 4, workerConcurrency: 1, sendAttempts: 3 }
  }));
  return { sender, publishedAt, recorded, finished };
}

/** @param {number} n @param {{ releaseAt?: number, deadlineAt?: number }} timing */
function segment(n, timing) {
  const devices = Array.from({ length: n }, (_, i) => ({ endpointArn: `arn:aws:sns:us-east-1:1:endpoint/GCM/app/${i}`, platform: 'GCM' }));
  return /** @type {any} */ ({ campaignId: 'c-1', index: 0, firstSeq: 0, devices, ...timing });
}

test('a segment handed out less than a second early is held until its release, not sent early', async () => {
  const { sender, publishedAt, finished } = fakeSender();
  const releaseAt = Date.now() + 700;
  assert.equal(await sender.send(segment(3, { releaseAt })), undefined);
  assert.equal(publishedAt.length, 3);
  assert.ok(Math.min(...publishedAt) >= releaseAt, `first publish ${releaseAt - Math.min(...publishedAt)} ms before the release`);
  assert.deepEqual(finished, [0]);
});

test('a segment due at its deadline and handed out early sends nothing: every device expires', async () => {
  const deadlineAt = Date.now() + 700;
  const { sender, publishedAt, recorded, finished } = fakeSender({ deadlineAt });
  assert.equal(await sender.send(segment(3, { releaseAt: deadlineAt, deadlineAt })), undefined);
  assert.equal(publishedAt.length, 0, 'nothing published for a group released only at its deadline');
  assert.deepEqual(recorded.map((o) => o.outcome), ['expired', 'expired', 'expired']);
  assert.deepEqual(finished, [0]);
});

test('stop() during the hold hands the segment back with the time left to its release', async () => {
  const { sender, publishedAt } = fakeSender();
  const releaseAt = Date.now() + 900;
  const sending = sender.send(segment(2, { releaseAt }));
  setTimeout(() => sender.stop(), 300);
  const result = await sending;
  assert.ok(result && result.deferMs > 0 && result.deferMs <= 600, `handed back: ${JSON.stringify(result)}`);
  assert.equal(publishedAt.length, 0);
});
