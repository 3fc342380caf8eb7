import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointDisabledException, ThrottledException, InvalidParameterException, InternalErrorException } from '@aws-sdk/client-sns';
import { classifyPublishError } from '../../shared/sns/sns-client.js';

const meta = (/** @type {number} */ status) => ({ $metadata: { httpStatusCode: status } });

test('SNS exceptions map to what the sender does next', () => {
  assert.equal(classifyPublishError(new EndpointDisabledException({ message: 'Endpoint is disabled', ...meta(400) })).kind, 'disabled');
  assert.equal(classifyPublishError(new ThrottledException({ message: 'slow down', ...meta(429) })).kind, 'throttled');
  assert.equal(classifyPublishError(Object.assign(new Error('Rate exceeded'), { name: 'Throttling', ...meta(400) })).kind, 'throttled');
  assert.equal(classifyPublishError(new InternalErrorException({ message: 'oops', ...meta(500) })).kind, 'transient');
  assert.equal(classifyPublishError(new InvalidParameterException({ message: 'bad', ...meta(400) })).kind, 'permanent');
});

test('network errors and expired credentials are transient, never permanent', () => {
  assert.equal(classifyPublishError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })).kind, 'transient');
  assert.equal(classifyPublishError(Object.assign(new Error('expired'), { name: 'ExpiredToken', ...meta(403) })).kind, 'transient');
});

test('the reason names the code', () => {
  const result = classifyPublishError(new InvalidParameterException({ message: 'Invalid parameter: TargetArn', ...meta(400) }));
  assert.match(/** @type {string} */ (result.reason), /^InvalidParameter.*: Invalid parameter: TargetArn$/);
});
