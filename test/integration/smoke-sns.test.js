// npm run smoke:sns against the local emulator (--sns-endpoint): the one push goes out
// through the project's client and rendering, and nothing goes out under CI. The real
// thing (AWS) is run by a person, never by the tests.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { ROOT, startEmulator, deviceArn } from '../support/harness.js';

/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;
before(async () => { sns = await startEmulator(); });
after(async () => { await sns.emulator.close(); });

/** @param {string[]} args @param {Record<string, string>} env */
async function smoke(args, env) {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/smoke-sns.js'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const [code] = await once(child, 'close');
  return { code, stdout, stderr };
}

/** Publishes the emulator recorded for one ARN. @param {string} arn */
async function deliveries(arn) {
  const answer = await fetch(`${sns.url}/_emulator/deliveries?target=${encodeURIComponent(arn)}`);
  return /** @type {{ deliveries: { message: unknown }[] }} */ (await answer.json()).deliveries;
}

test('one push, rendered for the endpoint\'s platform and locale, and SNS\'s answer printed', async () => {
  const arn = deviceArn(1); // a GCM endpoint
  const run = await smoke(['--endpoint-arn', arn, '--sns-endpoint', sns.url, '--locale', 'fi'], {});
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^delivered: http:\/\/127\.0\.0\.1:\d+ accepted the push for the GCM endpoint \(message id [\w-]+\)\n$/);
  assert.doesNotMatch(run.stdout, /endpoint\/GCM\//, 'the ARN, which identifies a phone, is not printed');
  const sent = await deliveries(arn);
  assert.equal(sent.length, 1);
  assert.match(JSON.stringify(sent[0].message), /Viikonlopun tarjoukset/, "the fi variant of examples/announcement.json");
});

test('under CI=true nothing is sent, exit 2', async () => {
  const arn = deviceArn(4);
  const run = await smoke(['--endpoint-arn', arn, '--sns-endpoint', sns.url], { CI: 'true' });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^smoke:sns: refused under CI \(CI=true\)/);
  assert.deepEqual(await deliveries(arn), []);
});
