// What the running campaigns still have to send, as the governor tells its controller.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devicesStillToSend } from '../../shared/campaign/campaign-progress.js';

/** @param {Partial<import('../../shared/types.js').Campaign>} fields */
const campaign = (fields) => /** @type {import('../../shared/types.js').Campaign} */ ({
  id: 'c', name: 'c', state: 'running', enqueued: true, total: 0, delivered: 0, disabled: 0, failed: 0,
  cancelled: 0, expired: 0, createdAt: 0, finishedAt: null, maxRate: null, deadlineAt: null, ttlMs: null, ...fields
});

test('devicesStillToSend: what remains of the running campaigns, zone groups released later included', () => {
  const now = 1_000_000;
  const hour = 3_600_000;
  const running = [
    { campaign: campaign({ total: 1000, delivered: 300, disabled: 20, failed: 5, cancelled: 0, expired: 0 }), releases: [] },
    {
      campaign: campaign({ total: 900, delivered: 100 }),
      releases: [{ at: now - 1, zones: ['Europe/Paris'], devices: 400 }, { at: now + hour, zones: ['America/New_York'], devices: 500 }]
    },
    { campaign: campaign({ state: 'paused', total: 5000 }), releases: [] }
  ];
  // 675 + 800: the New York group will need room within the hour; the paused campaign sends nothing.
  assert.equal(devicesStillToSend(running, now), 1475);
  assert.equal(devicesStillToSend([], now), 0);

  // A group due after the campaign's deadline is never sent; one due before it is.
  const groups = [{ at: now - 1, zones: ['Europe/Paris'], devices: 300 }, { at: now + hour, zones: ['America/New_York'], devices: 500 }];
  const before = { campaign: campaign({ total: 900, delivered: 100, deadlineAt: now + 2 * hour }), releases: groups };
  const after = { campaign: campaign({ total: 900, delivered: 100, deadlineAt: now + hour / 2 }), releases: groups };
  assert.equal(devicesStillToSend([before], now), 800);
  assert.equal(devicesStillToSend([after], now), 300);
  // Past its deadline a campaign sends nothing more, whatever it still counts as left.
  assert.equal(devicesStillToSend([after], now + hour / 2), 0);
});

test('devicesStillToSend: unknown while a running campaign is still being enqueued', () => {
  assert.equal(devicesStillToSend([{ campaign: campaign({ total: 10 }), releases: [] }, { campaign: campaign({ enqueued: false, total: 10 }), releases: [] }]), null);
  // A paused one still enqueueing does not matter: it sends nothing now.
  assert.equal(devicesStillToSend([{ campaign: campaign({ total: 10 }), releases: [] }, { campaign: campaign({ state: 'paused', enqueued: false }), releases: [] }]), 10);
});
