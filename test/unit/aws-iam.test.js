// docs/aws-iam/: the least privilege each process type needs on AWS, kept in step with
// the Procfile and with what the code calls (only SNS Publish, to platform endpoints).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const dir = new URL('docs/aws-iam/', root);
const policies = Object.fromEntries(readdirSync(dir).filter((file) => file.endsWith('.json'))
  .map((file) => [file.replace(/\.json$/, ''), JSON.parse(readFileSync(new URL(file, dir), 'utf8'))]));
const procfileTypes = readFileSync(new URL('Procfile', root), 'utf8').trim().split('\n').map((line) => line.split(':')[0]);
// These call no AWS API: the governor reads the gateway's metrics, the scheduler enqueues,
// web reads Redis, release migrates PostgreSQL.
const NO_AWS = ['governor', 'scheduler', 'web', 'release'];
// Every place that makes an SNS client, and the policy it runs under.
const SNS_CALLERS = { 'shared/sending/worker-process.js': 'worker', 'shared/events/ingest-process.js': 'ingest',
  'producers/cli/test-send.js': 'pushctl', 'scripts/smoke-sns.js': 'pushctl' };

test('every Procfile process type has a policy or calls no AWS API, and pushctl has one', () => {
  for (const type of procfileTypes) assert.ok(type in policies || NO_AWS.includes(type), `${type}: docs/aws-iam/${type}.json`);
  assert.ok('pushctl' in policies);
  for (const [file, type] of Object.entries(SNS_CALLERS)) {
    assert.match(readFileSync(new URL(file, root), 'utf8'), /createSnsClient\(/, `${file} makes an SNS client`);
    assert.ok(type in policies, `${file} runs under docs/aws-iam/${type}.json`);
  }
});

test('each policy allows only sns:Publish, only to platform endpoints, one statement with a Sid', () => {
  for (const [type, policy] of Object.entries(policies)) {
    assert.equal(policy.Version, '2012-10-17', type);
    assert.equal(policy.Statement.length, 1, type);
    const [statement] = policy.Statement;
    assert.match(statement.Sid, /^[A-Za-z0-9]+$/, `${type}: Sid`);
    assert.equal(statement.Effect, 'Allow', type);
    assert.equal(statement.Action, 'sns:Publish', `${type}: the only SNS call the code makes (PublishCommand)`);
    for (const resource of statement.Resource) {
      assert.match(resource, /^arn:aws:sns:REGION:ACCOUNT_ID:endpoint\/(APNS|APNS_SANDBOX|GCM)\/YOUR_\w+_APP\/\*$/, `${type}: ${resource}`);
    }
  }
});

test('the code publishes with PublishCommand and nothing else from the SNS client', () => {
  const client = readFileSync(new URL('shared/sns/sns-client.js', root), 'utf8');
  assert.deepEqual([...client.matchAll(/new (\w+Command)\(/g)].map((match) => match[1]), ['PublishCommand']);
});
