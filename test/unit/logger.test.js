import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../shared/logger.js';

test('device identifiers and secrets are redacted from JSON logs', () => {
  /** @type {string[]} */
  const lines = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const logger = createLogger({ logLevel: 'info' }, { process: 'test' }, sink);
  logger.info({ endpointArn: 'arn:aws:sns:x:1:endpoint/GCM/a/b', device: { token: 'device-token-123', endpointArn: 'arn:2' },
    config: { password: 'hunter2' }, campaignId: 'c-1' }, 'sent');
  const entry = JSON.parse(lines[0]);
  assert.equal(entry.endpointArn, '[Redacted]');
  assert.equal(entry.device.token, '[Redacted]');
  assert.equal(entry.device.endpointArn, '[Redacted]');
  assert.equal(entry.config.password, '[Redacted]');
  assert.equal(entry.campaignId, 'c-1', 'ids that are not personal stay readable');
  assert.equal(entry.process, 'test');
  assert.doesNotMatch(lines[0], /device-token-123|hunter2|endpoint\/GCM/);
});
