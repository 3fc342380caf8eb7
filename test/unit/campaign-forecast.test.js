// The forecast from a live model (shared/forecast/campaign-forecast.js) and the live model's
// own arithmetic (shared/governor/live-model.js): pure, no Redis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forecastCampaign, fixedRateForecast, hourBaseline, MIN_HOUR_WINDOWS } from '../../shared/forecast/campaign-forecast.js';
import { liveModelOf, foldHourBaseline } from '../../shared/governor/live-model.js';
import { resolveControllerOptions } from '../../shared/pacing/controller-options.js';

const options = resolveControllerOptions({});
/** @param {Partial<import('../../shared/forecast/campaign-forecast.js').LiveModel>} [over] */
const model = (over = {}) => ({
  ...liveModelOf({ requestsPerSend: 1.5, requestsPerSendSd: 0.15, baseline: 300, baselineSd: 5, capacity: 1000, medianFactor: 1, sigmaFactor: 1, excessNoiseRps: 0 },
    options, { at: Date.UTC(2026, 10, 24, 12), rate: 100, reason: 'plan' }),
  ...over
});

test('a large campaign is paced by the room for wake-ups: its average load sits near the capacity', () => {
  const f = forecastCampaign(model(), { devices: 1_000_000 });
  assert.equal(f.source, 'governor');
  // Steady state: (capacity - baseline) / requests per send = 467/s, so about 2,140 s (less
  // the start's burst and the end's speed-up, more the caution of the load bound).
  assert.ok(f.durationSeconds > 2140 * 0.85 && f.durationSeconds < 2140 * 1.3, `${f.durationSeconds} s`);
  assert.ok(f.durationLowSeconds < f.durationSeconds && f.durationSeconds < f.durationHighSeconds, JSON.stringify(f));
  assert.ok(f.peakLoadRps !== null && f.peakLoadRps <= 1000 && f.peakLoadRps > 800, `peak ${f.peakLoadRps}`);
  assert.equal(f.capacityRps, 1000);
  assert.ok(f.load.length > f.durationSeconds / 10, 'a load point per bin, through the last wake-ups');
  assert.ok(f.load.every((p) => p.lowRps <= p.loadRps && p.loadRps <= p.highRps));
});

test('more requests per send, a higher baseline or a lower capacity: a longer campaign', () => {
  const base = forecastCampaign(model(), { devices: 300_000 }).durationSeconds;
  assert.ok(forecastCampaign(model({ requestsPerSend: 3 }), { devices: 300_000 }).durationSeconds > 1.6 * base);
  assert.ok(forecastCampaign(model({ baselineRps: 600 }), { devices: 300_000 }).durationSeconds > 1.6 * base);
  assert.ok(forecastCampaign(model({ capacityRps: 600 }), { devices: 300_000 }).durationSeconds > 2 * base);
});

test('a campaign whose wake-ups fit goes at the maximum rate; the campaign\'s own cap bounds it', () => {
  const f = forecastCampaign(model(), { devices: 2000 });
  assert.ok(f.durationSeconds <= 2, `${f.durationSeconds} s`);
  const capped = forecastCampaign(model(), { devices: 2000, maxRate: 10 });
  assert.ok(capped.durationSeconds >= 200 && capped.durationSeconds <= 210, `${capped.durationSeconds} s`);
});

test('no room at all: the forecast says it would not finish instead of running for ever', () => {
  const f = forecastCampaign(model({ baselineRps: 2000 }), { devices: 1_000_000 });
  assert.match(f.note, /not finished within 2 days/);
});

test('a scheduled campaign reads the baseline learned for its hour, once that hour has enough windows', () => {
  const at = Date.UTC(2026, 10, 24, 12);
  let byHour = /** @type {import('../../shared/forecast/campaign-forecast.js').LiveModel['baselineByHour']} */ ([]);
  for (let i = 0; i < MIN_HOUR_WINDOWS; i++) byHour = foldHourBaseline(byHour, Date.UTC(2026, 10, 23, 20, 0, i * 10), 700);
  byHour = foldHourBaseline(byHour, at, 300);
  assert.deepEqual(byHour.map((h) => [h.hour, h.windows]), [[12, 1], [20, MIN_HOUR_WINDOWS]]);
  const m = model({ baselineByHour: byHour });
  const evening = Date.UTC(2026, 10, 24, 20, 30);
  assert.deepEqual(hourBaseline(m, evening), { hour: 20, rps: 700, windows: MIN_HOUR_WINDOWS });
  assert.equal(hourBaseline(m, at), null, 'one window is not enough');
  const later = forecastCampaign(m, { devices: 300_000, startAt: evening });
  const now = forecastCampaign(m, { devices: 300_000 });
  assert.equal(later.baselineRps, 700);
  assert.equal(now.baselineRps, 300);
  assert.ok(later.durationSeconds > 1.8 * now.durationSeconds, `${later.durationSeconds} against ${now.durationSeconds}`);
});

test('between campaigns, the shape the memory holds sets the forecast\'s wake-up timing', () => {
  const slow = forecastCampaign(model({ rememberedShape: { medianFactor: 4, sigmaFactor: 1 } }), { devices: 50_000 });
  const nominal = forecastCampaign(model(), { devices: 50_000 });
  assert.ok(slow.load.length > nominal.load.length, 'slower openers: the wake-ups last longer');
});

test('without a governor: the fixed rate alone, said so', () => {
  const f = fixedRateForecast({ devices: 2000, rate: 200 });
  assert.deepEqual([f.source, f.durationSeconds, f.peakLoadRps], ['fixed-rate', 10, null]);
  assert.match(f.note, /no governor/);
});

test('the live model keeps what the forecast needs from a controller snapshot, with fallbacks for what it lacks', () => {
  const m = liveModelOf({}, options, { at: 1, rate: 5, reason: 'stale' });
  assert.equal(m.requestsPerSend, options.openProbability * options.requestsPerOpen);
  assert.equal(m.capacityRps, options.capacityRps);
  assert.equal(m.options.binMs, options.binMs);
  assert.equal(m.rememberedShape, null);
  // The prior's trial: replayed only while the live controller's is still on.
  assert.equal(m.options.capacityTrialShare, 1, 'a snapshot that does not say: tried');
  assert.equal(liveModelOf({ capacityTrial: Infinity }, options, { at: 1, rate: 5, reason: 'plan' }).options.capacityTrialShare, 1);
  assert.equal(liveModelOf({ capacityTrial: 500 }, options, { at: 1, rate: 5, reason: 'plan' }).options.capacityTrialShare, options.capacityTrialShare);
});

test('a running campaign: the wake-ups of its sends so far are in the load ahead, and slow what is still to send', async () => {
  const { loadAhead, AHEAD_MS } = await import('../../shared/forecast/load-ahead.js');
  const m = model();
  const now = m.at;
  // 150,000 sends over the last 5 minutes: most of their wake-ups are still to come.
  const points = [];
  for (let s = 0; s <= 300; s += 10) points.push({ t: now - 300_000 + s * 1000, processed: s * 500 });
  const busy = loadAhead(m, { remaining: 100_000, points, now });
  const fresh = loadAhead(m, { remaining: 100_000, points: [], now });
  assert.equal(busy.t[0], now);
  assert.equal(busy.t[1] - busy.t[0], m.options.metricsWindowMs, 'a point per governor tick');
  assert.ok(/** @type {number} */ (busy.t.at(-1)) - now <= AHEAD_MS);
  assert.ok(busy.loadRps[0] > fresh.loadRps[0] + 100, `in-flight wake-ups now: ${busy.loadRps[0]} against ${fresh.loadRps[0]}`);
  assert.ok(busy.durationSeconds > fresh.durationSeconds, `the room they take slows the rest: ${busy.durationSeconds} s against ${fresh.durationSeconds} s`);
  assert.ok(Math.max(...busy.loadRps) <= 1.05 * m.capacityRps, 'the plan keeps the predicted load at the capacity');
  assert.equal(busy.capacityRps, 1000);
});

test('the chart\'s look ahead replays 15 minutes at most and extrapolates the rest; a replay too dear at the governor\'s tick takes coarser ones', async () => {
  const { loadAhead, AHEAD_MS } = await import('../../shared/forecast/load-ahead.js');
  // Three times the chart's 15 minutes: the steady rate reached by then carries the rest.
  const full = forecastCampaign(model(), { devices: 3_000_000 });
  const cut = forecastCampaign(model(), { devices: 3_000_000, horizonSeconds: 900 });
  assert.match(cut.note, /replayed for 15 minutes, then extrapolated/);
  assert.equal(full.note, '');
  assert.ok(Math.abs(cut.durationSeconds / full.durationSeconds - 1) < 0.02, `${cut.durationSeconds} s against the whole replay's ${full.durationSeconds} s`);
  // A campaign that ends inside the horizon is replayed to its end, as without one.
  assert.equal(forecastCampaign(model(), { devices: 100_000, horizonSeconds: 900 }).durationSeconds, forecastCampaign(model(), { devices: 100_000 }).durationSeconds);
  assert.ok(cut.load.length < full.load.length / 2, 'the load replayed only so far (and its wake-ups)');

  // A governor that decides every second: a campaign sent within a tick or two is replayed at
  // its tick; a long one at 10-s ticks (1,781 kernel bins a tick at 1 s, 179 at 10 s), to about
  // the same duration.
  const fine = model({ options: { ...model().options, metricsWindowMs: 1000, binMs: 1000 } });
  const quick = forecastCampaign(fine, { devices: 3000 });
  assert.deepEqual([quick.durationSeconds, quick.load[1].t - quick.load[0].t], [1, 1]);
  const long = forecastCampaign(fine, { devices: 1_000_000 });
  assert.equal(long.load[1].t - long.load[0].t, 10);
  assert.ok(Math.abs(long.durationSeconds / forecastCampaign(model(), { devices: 1_000_000 }).durationSeconds - 1) < 0.02);
  // The chart's 15 minutes of a long campaign: 10-s steps, 90 of them.
  const ahead = loadAhead(fine, { remaining: 1_000_000, points: [], now: fine.at });
  assert.equal(ahead.t[1] - ahead.t[0], 10_000);
  assert.ok(ahead.t.length <= AHEAD_MS / 10_000 + 1, `${ahead.t.length} points`);
  const coarse = loadAhead(model(), { remaining: 1_000_000, points: [], now: fine.at });
  assert.ok(Math.abs(ahead.durationSeconds / coarse.durationSeconds - 1) < 0.05, `${ahead.durationSeconds} s against ${coarse.durationSeconds} s at 10-s ticks`);
});

/**
 * A memory entry for a campaign the size of `sends`, sent in the model's own conditions.
 * @param {number | null} seconds  how long it took (null: an entry from before durations were kept)
 * @param {Partial<import('../../shared/pacing/wake-up-memory.js').MemoryEntry>} [over]
 * @returns {import('../../shared/pacing/wake-up-memory.js').MemoryEntry}
 */
const entry = (seconds, over = {}) => ({
  at: Date.UTC(2026, 10, 24, 10), kind: null, sends: 300_000, requestsPerSend: 1.5, requestsPerSendSd: 0.15, medianFactor: 1, sigmaFactor: 1,
  seconds, baselineRps: 300, capacityRps: 1000, startPrior: { requestsPerSend: 1.5, requestsPerSendSd: 0.15 }, ...over
});

test('calibration: a past campaign that took k× its replay makes the forecast k× the model\'s, its range too', () => {
  const plain = forecastCampaign(model(), { devices: 300_000 });
  assert.equal(plain.calibration, null, 'no memory: not calibrated');
  assert.equal(plain.durationSeconds, plain.modelDurationSeconds);
  // A past campaign of the same size in the same conditions replays to the model's own duration.
  const same = forecastCampaign(model(), { devices: 300_000, earlier: [entry(plain.modelDurationSeconds)] });
  assert.ok(same.calibration && Math.abs(same.calibration.ratio - 1) < 0.01, JSON.stringify(same.calibration));
  const slow = forecastCampaign(model(), { devices: 300_000, earlier: [entry(2 * plain.modelDurationSeconds)] });
  assert.ok(slow.calibration && Math.abs(slow.calibration.ratio - 2) < 0.02, JSON.stringify(slow.calibration));
  assert.equal(slow.modelDurationSeconds, plain.modelDurationSeconds, 'the model\'s own stays');
  assert.ok(Math.abs(slow.durationSeconds - 2 * plain.durationSeconds) <= 2, `${slow.durationSeconds} vs 2 × ${plain.durationSeconds}`);
  assert.ok(slow.durationLowSeconds >= 2 * plain.durationLowSeconds - 2 && slow.durationHighSeconds <= 2 * plain.durationHighSeconds + 2);
  assert.ok(Math.abs(slow.averageRate - 300_000 / slow.durationSeconds) < 1);
});

test('calibration: each past campaign is replayed in its own conditions and size, not today\'s', () => {
  // Half the headroom then (baseline 650 against 1,000): twice as long as today would take, and no slower than its replay.
  const then = forecastCampaign(model({ baselineRps: 650 }), { devices: 100_000 }).modelDurationSeconds;
  const f = forecastCampaign(model(), { devices: 300_000, earlier: [entry(then, { sends: 100_000, baselineRps: 650 })] });
  assert.ok(f.calibration && Math.abs(f.calibration.ratio - 1) < 0.05, JSON.stringify(f.calibration));
});

test('calibration: the latest campaigns count, older and other kinds less; entries without a duration are skipped; ratios are bounded', () => {
  const base = forecastCampaign(model(), { devices: 300_000 }).modelDurationSeconds;
  const day = 86_400_000;
  const old = entry(4 * base, { at: Date.UTC(2026, 10, 24, 10) - 28 * day });
  const recent = entry(base);
  const mixed = forecastCampaign(model(), { devices: 300_000, earlier: [old, recent] });
  // Four weeks old weighs 1/16: the geometric mean leans to the recent one's 1.
  assert.ok(mixed.calibration && mixed.calibration.ratio > 1 && mixed.calibration.ratio < 1.2, JSON.stringify(mixed.calibration));
  assert.ok(mixed.calibration.spread > 1, 'two campaigns that disagree widen the range');
  const kinds = forecastCampaign(model(), { devices: 300_000, kind: 'digest', earlier: [entry(2 * base, { kind: 'promo' }), entry(base, { kind: 'digest' })] });
  assert.ok(kinds.calibration && kinds.calibration.ratio > 1.1 && kinds.calibration.ratio < 1.2, `another kind counts a quarter: ${JSON.stringify(kinds.calibration)}`);
  const legacy = forecastCampaign(model(), { devices: 300_000, earlier: [entry(base, { seconds: null }), entry(base, { baselineRps: null })] });
  assert.equal(legacy.calibration, null, 'older entries (no duration or conditions) do not calibrate');
  const held = forecastCampaign(model(), { devices: 300_000, earlier: [entry(100 * base)] });
  assert.equal(held.calibration?.ratio, 5, 'a campaign held by hand says little about the model: bounded at 5×');
});

test('a capacity estimate worn down between campaigns: the gateway is the one the latest campaign learned under load, the controller starts from the live estimate', () => {
  // The live estimate after an idle night (600) against the 1,000 the last campaign ended with.
  const worn = model({ capacityRps: 600 });
  const alone = forecastCampaign(worn, { devices: 300_000 });
  const remembered = forecastCampaign(worn, { devices: 300_000, earlier: [entry(null)] });
  const fresh = forecastCampaign(model(), { devices: 300_000 });
  assert.ok(remembered.modelDurationSeconds < 0.7 * alone.modelDurationSeconds, `${remembered.modelDurationSeconds} s vs ${alone.modelDurationSeconds} s`);
  // Slower than a controller that starts at 1,000: it must climb there as the load tests it.
  assert.ok(remembered.modelDurationSeconds > fresh.modelDurationSeconds, `${remembered.modelDurationSeconds} s vs ${fresh.modelDurationSeconds} s`);
  // A remembered capacity under the live one changes nothing: the live one is newer.
  const lower = forecastCampaign(model(), { devices: 300_000, earlier: [entry(null, { capacityRps: 500 })] });
  assert.equal(lower.modelDurationSeconds, fresh.modelDurationSeconds);
});

test('while a campaign runs, its live capacity estimate stands against a remembered higher one', () => {
  const running = model({ capacityRps: 600, remaining: 50_000 });
  const without = forecastCampaign(running, { devices: 300_000 });
  const withMemory = forecastCampaign(running, { devices: 300_000, earlier: [entry(null)] });
  assert.equal(withMemory.modelDurationSeconds, without.modelDurationSeconds);
});
