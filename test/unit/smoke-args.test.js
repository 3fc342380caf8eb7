// npm run smoke:sns: one real push, so its arguments refuse everything but an explicit ask.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSmokeArgs } from '../../shared/sns/smoke-args.js';

const ARN = 'arn:aws:sns:eu-west-1:123456789012:endpoint/GCM/my-app/0f3c2a1b-1111-4000-8000-000000000000';

test('it refuses to run under CI whatever the arguments', () => {
  for (const ci of ['true', '1', 'yes', 'TRUE']) {
    assert.throws(() => parseSmokeArgs(['--endpoint-arn', ARN], { CI: ci }), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_INPUT');
      assert.match(/** @type {Error} */ (error).message, /^refused under CI \(CI=/);
      return true;
    });
  }
  for (const ci of ['false', '0', '', undefined]) assert.equal(typeof parseSmokeArgs(['--endpoint-arn', ARN], { CI: ci }), 'object', `CI=${ci}`);
});

test('an explicit platform endpoint ARN is required; its region is the one published in', () => {
  assert.throws(() => parseSmokeArgs([], {}), /^InputError: --endpoint-arn ARN is required/);
  assert.throws(() => parseSmokeArgs(['--endpoint-arn'], {}), /--endpoint-arn needs a value/);
  assert.throws(() => parseSmokeArgs(['--endpoint-arn', 'arn:aws:sns:eu-west-1:123456789012:my-topic'], {}), /must be an SNS platform endpoint ARN/);
  assert.throws(() => parseSmokeArgs(['--endpoint-arn', ARN.replace('/GCM/', '/WNS/')], {}), /for APNS, APNS_SANDBOX or GCM/);
  const request = parseSmokeArgs([`--endpoint-arn=${ARN}`, '--locale', 'fi'], {});
  assert.ok(request !== 'help');
  assert.equal(request.region, 'eu-west-1');
  assert.equal(request.platform, 'GCM');
  assert.equal(request.locale, 'fi');
  assert.equal(request.snsEndpoint, undefined, 'AWS unless another endpoint is named');
  assert.match(request.messageFile, /examples\/announcement\.json$/);
});

test('unknown arguments and a bad --sns-endpoint are refused; --help asks for the usage', () => {
  assert.throws(() => parseSmokeArgs(['--endpoint-arn', ARN, '--yes'], {}), /unknown argument "--yes"/);
  assert.throws(() => parseSmokeArgs(['--endpoint-arn', ARN, '--sns-endpoint', 'localhost:9911'], {}), /--sns-endpoint must be an http:\/\/ or https:\/\/ URL/);
  assert.equal(parseSmokeArgs(['--help'], {}), 'help');
});
