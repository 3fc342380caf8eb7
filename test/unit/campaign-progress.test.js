// What the running campaigns still have to send, as the governor tells its controller.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendableDevices } from '../../shared/campaign-progress.js';

/** @param {Partial<import('../../shared/campaign-store.js').Campaign>} fields */
const campaign = (fields) => /** @type {import('../../shared/campaign-store.js').Campaign} */ ({
  id: 'c', name: 'c', state: 'running', enqueued: true, total: 0, delivered: 0, disabled: 0, failed: 0,
  cancelled: 0, expired: 0, createdAt: 0, finishedAt: null, maxRate: null, deadlineAt: null, ttlMs: null, ...fields
});

test('sendableDevices: what remains of the running campaigns, less the zone groups not yet released', () => {
  const now = 1_000_000;
  const running = [
    { campaign: campaign({ total: 1000, delivered: 300, disabled: 20, failed: 5, cancelled: 0, expired: 0 }), releases: [] },
    {
      campaign: campaign({ total: 900, delivered: 100 }),
      releases: [{ at: now - 1, zones: ['Europe/Paris'], devices: 400 }, { at: now + 3_600_000, zones: ['America/New_York'], devices: 500 }]
    },
    { campaign: campaign({ state: 'paused', total: 5000 }), releases: [] }
  ];
  // 675 + (800 - 500 waiting) = 975; the paused campaign sends nothing now.
  assert.equal(sendableDevices(running, now), 975);
  assert.equal(sendableDevices([], now), 0);
  // Past its deadline a campaign sends nothing more, whatever it still counts as left or waiting.
  const late = { campaign: campaign({ total: 900, delivered: 100, deadlineAt: now - 1 }), releases: [{ at: now + 60_000, zones: ['Asia/Tokyo'], devices: 500 }] };
  assert.equal(sendableDevices([late], now), 0);
  assert.equal(sendableDevices([late], now - 10), 300);
});

test('sendableDevices: unknown while a running campaign is still being enqueued', () => {
  assert.equal(sendableDevices([{ campaign: campaign({ total: 10 }), releases: [] }, { campaign: campaign({ enqueued: false, total: 10 }), releases: [] }]), null);
  // A paused one still enqueueing does not matter: it sends nothing now.
  assert.equal(sendableDevices([{ campaign: campaign({ total: 10 }), releases: [] }, { campaign: campaign({ state: 'paused', enqueued: false }), releases: [] }]), 10);
});
