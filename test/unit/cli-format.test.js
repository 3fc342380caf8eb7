// pushctl's human-readable output: one table layout for every listing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTable, progressLine } from '../../producers/cli/format.js';
import { parseRateRequest } from '../../producers/cli/rate.js';

describe('formatTable (pushctl list, schedule list)', () => {
  it('pads each column to its widest cell, with no trailing blanks', () => {
    assert.equal(formatTable([['ID', 'STATE', 'NAME'], ['c-1', 'running', 'Sale'], ['c-22', 'completed', '']]),
      'ID    STATE      NAME\nc-1   running    Sale\nc-22  completed\n');
  });
});

/** A running campaign's progress with every part of the line long. @returns {import('../../shared/campaign/campaign-progress.js').CampaignProgress} */
function longProgress() {
  return /** @type {any} */ ({
    state: 'running', percent: 42.3, delivered: 423_456, failed: 12_345, disabled: 3_210, total: 1_000_000, enqueued: true,
    rate: 1000, achievedRate: 812.4, averageRate: 0, etaSeconds: 754
  });
}

describe('progressLine (status --watch)', () => {
  const extra = [{ text: 'expired 1,234', rank: 2 }, { text: 'waiting 120,000 in 4 zone(s), next 2027-06-01T06:00:00.000Z', rank: 5 }];

  it('without a width, shows every part with a 24-cell bar', () => {
    const line = progressLine(longProgress(), { extra });
    assert.match(line, /^█{10}░{14}  42\.3%  sent 423,456  failed 12,345  disabled 3,210  total 1,000,000  rate 812\/s \(limit 1000\/s\)  ETA 12m34s  expired 1,234  waiting 120,000/);
  });

  it('fits any width, one column to spare, keeping the percentage, sent and the ETA', () => {
    for (const columns of [30, 40, 60, 80, 100, 120]) {
      const line = progressLine(longProgress(), { columns, extra });
      assert.ok(line.length <= columns - 1, `${line.length} > ${columns - 1}: ${line}`);
      if (columns >= 40) assert.match(line, /42\.3%  sent 423,456.*ETA 12m34s/, `at ${columns}: ${line}`);
    }
  });

  it('leaves out the least needed parts first: at 80 columns, disabled, total and waiting go, failed and expired stay', () => {
    const line = progressLine(longProgress(), { columns: 80, extra });
    assert.doesNotMatch(line, /disabled|total|waiting/);
    assert.match(line, /^[█░]{8,24}  42\.3%  sent 423,456  failed 12,345  .*ETA 12m34s  expired 1,234$/);
  });

  it('a wide terminal gets the whole line', () => {
    assert.equal(progressLine(longProgress(), { columns: 300, extra }), progressLine(longProgress(), { extra }));
  });
});

describe('parseRateRequest (pushctl rate RATE)', () => {
  it('takes plain decimal numbers', () => {
    assert.deepEqual(parseRateRequest('500', {}), { rate: 500, burst: undefined });
    assert.deepEqual(parseRateRequest('12.5', { burst: '3' }), { rate: 12.5, burst: 3 });
    assert.deepEqual(parseRateRequest('0', { yes: true }), { rate: 0, burst: undefined });
  });

  it('refuses anything else, quoting it, and 0 without --yes', () => {
    for (const text of ['', ' ', '0x10', '1e3', 'NaN', '-1', '.5', '5.', ' 5', '5 ', '1_000', '٣']) {
      assert.throws(() => parseRateRequest(text, { yes: true }), { code: 'PUSH_ERR_INPUT', message: new RegExp(`got "${text.replace('.', '\\.')}"$`) });
    }
    assert.throws(() => parseRateRequest('0', {}), /add --yes/);
    assert.throws(() => parseRateRequest('10', { burst: '0' }), /--burst must be a whole number ≥ 1, got "0"/);
  });
});
