// One Node.js version everywhere it is chosen: the one CI tests (the Node running this
// test), package.json's engines (Heroku's Node buildpack installs what it says), .nvmrc
// and the Dockerfile's base image. And no installed package that refuses that Node: the
// AWS SDK's releases after the first week of January 2027 need Node 22, so the lockfile
// must stay on releases that run where CI does until all of these move together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import semver from 'semver';

const root = new URL('../../', import.meta.url);
const read = (/** @type {string} */ file) => readFileSync(new URL(file, root), 'utf8');
const pkg = JSON.parse(read('package.json'));
const lock = JSON.parse(read('package-lock.json'));
const tested = process.versions.node;
const testedMajor = Number(tested.split('.')[0]);

test('package.json engines, .nvmrc and the Dockerfile name the Node major CI runs the tests on', () => {
  const engines = pkg.engines.node;
  assert.ok(semver.satisfies(tested, engines), `engines.node "${engines}" must admit the tested Node ${tested}`);
  assert.equal(semver.minVersion(engines)?.major, testedMajor, `engines.node "${engines}" starts at the tested major`);
  // An open range (>=20) would let Heroku's buildpack pick the newest Node, which CI never ran.
  assert.ok(!semver.satisfies(`${testedMajor + 1}.0.0`, engines), `engines.node "${engines}" must not admit Node ${testedMajor + 1}, which CI does not test`);
  assert.equal(read('.nvmrc').trim(), String(testedMajor));
  const from = read('Dockerfile').match(/^FROM\s+node:(\d+)[^\s]*/m);
  assert.ok(from, 'the Dockerfile starts FROM an official node image');
  assert.equal(Number(from[1]), testedMajor, `Dockerfile ${from[0]}`);
});

test('every package in the lockfile accepts the tested Node (the AWS SDK and Smithy above all)', () => {
  /** @type {string[]} */
  const refused = [];
  let aws = 0;
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path) continue; // the project itself, checked above
    if (/node_modules\/@(aws-sdk|smithy)\//.test(path)) aws += 1;
    const range = entry.engines?.node;
    if (range && !entry.optional && !semver.satisfies(tested, range)) refused.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} wants node ${range}`);
  }
  assert.ok(aws >= 10, 'the lockfile holds the AWS SDK');
  assert.deepEqual(refused, [], `packages that refuse Node ${tested}`);
});
