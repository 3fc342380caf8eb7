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

test('an endpoint ARN quoted in text is redacted from every part of a line: message, error, any field', () => {
  /** @type {string[]} */
  const lines = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const logger = createLogger({ logLevel: 'info' }, { process: 'test' }, sink);
  const arn = 'arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/my-app/0f6c1d2e-aaaa-bbbb-cccc-1234567890ab';
  const govArn = 'arn:aws-us-gov:sns:us-gov-west-1:123456789012:endpoint/GCM/app/abc';
  // As SNS words an error for a disabled endpoint, thrown and logged by the worker.
  const error = Object.assign(new Error(`Invalid parameter: TargetArn Reason: Endpoint ${arn} is disabled`), { code: 'EndpointDisabled' });
  logger.warn({ err: error, segment: { lastReason: `throttled at ${govArn}` }, campaignId: 'c-1' }, `send attempts used up for ${arn}; the segment will be retried`);
  logger.info({ topic: 'arn:aws:sns:eu-west-1:123456789012:campaign-topic' }, 'plain');
  assert.equal(lines.length, 2);
  for (const line of lines) assert.doesNotMatch(line, /endpoint\/(APNS|GCM)/);
  const entry = JSON.parse(lines[0]);
  assert.equal(entry.msg, 'send attempts used up for [endpoint]; the segment will be retried');
  assert.match(entry.err.message, /Endpoint \[endpoint\] is disabled/);
  assert.match(entry.err.stack, /Endpoint \[endpoint\] is disabled/);
  assert.equal(entry.segment.lastReason, 'throttled at [endpoint]');
  assert.equal(entry.campaignId, 'c-1');
  assert.equal(JSON.parse(lines[1]).topic, 'arn:aws:sns:eu-west-1:123456789012:campaign-topic', 'a topic ARN names no person and stays');
});
