// docker-compose.yml, the Procfile and the config stay in step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { parse } from 'yaml';
import { DEFAULTS, loadConfig } from '../../config/index.js';

const root = new URL('../../', import.meta.url);
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true });
const procfile = Object.fromEntries(readFileSync(new URL('Procfile', root), 'utf8').trim().split('\n')
  .map((line) => /** @type {[string, string]} */ (line.split(/:\s+/, 2))));
// Variables the app reads that are not in DEFAULTS because they have no default.
const OPTIONAL = ['SNS_ENDPOINT', 'SEND_BURST', 'GATEWAY_METRICS_URL', 'METRICS_PORT', 'DASHBOARD_TOKEN', 'CLOUDWATCH_DIMENSIONS', 'AWS_ACCESS_KEY_ID'];
// Read by the AWS SDK's credential chain, not by config/index.js.
const SDK = ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];

test('every app variable in docker-compose.yml is one loadConfig knows, and it validates', () => {
  const known = new Set([...Object.keys(DEFAULTS), ...OPTIONAL, ...SDK]);
  for (const [name, service] of Object.entries(compose.services)) {
    if (service.image !== 'pushpace:local') continue; // backing services (redis, postgres...) have their own variables
    // As compose would run it with nothing set in the shell: ${VAR:-default} becomes the default.
    const env = Object.fromEntries(Object.entries(service.environment ?? {})
      .map(([variable, value]) => [variable, String(value).replace(/\$\{\w+:-([^}]*)\}/g, '$1')]));
    for (const variable of Object.keys(env)) assert.ok(known.has(variable), `${name}: ${variable} is not read by config/index.js`);
    assert.doesNotThrow(() => loadConfig(env), `${name}'s environment must pass loadConfig`);
  }
});

test('every Procfile process type runs in docker-compose.yml with the same command', () => {
  for (const [type, command] of Object.entries(procfile)) {
    if (type === 'release') {
      assert.deepEqual(compose.services.migrate.command, command.split(' '), 'the release phase is the migrate service');
      continue;
    }
    assert.ok(compose.services[type], `Procfile type ${type} has no docker-compose service`);
    assert.deepEqual(compose.services[type].command, command.split(' '), `${type} runs the same command`);
  }
});

test('the compose stack points the app at its own services and the emulator', () => {
  const env = compose.services.worker.environment;
  assert.match(env.REDIS_URL, /\/\/redis:6379/);
  assert.match(env.DATABASE_URL, /@postgres:5432\//);
  assert.equal(env.SNS_ENDPOINT, `http://sns-emulator:${compose.services['sns-emulator'].environment.SNS_EMULATOR_PORT}`);
  assert.ok(existsSync(new URL('Dockerfile', root)));
});
