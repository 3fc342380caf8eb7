// docker-compose.yml against what it runs: the Procfile's process types with healthchecks, one
// image built once, host ports as variables, Prometheus scraping every process type on its
// METRICS_PORT, Grafana provisioned with the shipped dashboard. There is no Docker engine in
// CI, so this is what checks the stack (variables against config/: deploy-files.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { parse } from 'yaml';

const root = new URL('../../', import.meta.url);
const read = (/** @type {string} */ path) => readFileSync(new URL(path, root), 'utf8');
/** @type {{ services: Record<string, any> }} */
const compose = parse(read('docker-compose.yml'), { merge: true });
const services = compose.services;
const IMAGE = 'pushpace:local';
const processTypes = read('Procfile').trim().split('\n').map((line) => line.split(':')[0]).filter((type) => type !== 'release');

/**
 * The host file a service mounts at `target` (short volume syntax "./host:/target[:ro]").
 * @param {any} service @param {string} target
 */
function mounted(service, target) {
  const volume = (service.volumes ?? []).map((/** @type {string} */ v) => String(v).split(':')).find((/** @type {string[]} */ [, to]) => to === target);
  assert.ok(volume, `nothing is mounted at ${target}`);
  assert.ok(existsSync(new URL(volume[0], root)), `${volume[0]} does not exist`);
  return volume[0];
}

test('every Procfile process type is a service of the app image with a healthcheck on its /readyz', () => {
  assert.ok(processTypes.length >= 5);
  for (const type of processTypes) {
    const service = services[type];
    assert.ok(service, `Procfile type ${type} has no service`);
    assert.equal(service.image, IMAGE, `${type} runs the app image`);
    const check = service.healthcheck?.test?.join(' ') ?? '';
    assert.ok(!service.healthcheck?.disable, `${type}'s healthcheck is off`);
    assert.ok(check.includes(`127.0.0.1:${service.environment.METRICS_PORT}/readyz`), `${type} checks /readyz on its METRICS_PORT: ${check}`);
  }
  // The backing services (and the emulator) report health too, so depends_on can wait for it.
  for (const name of ['redis', 'rabbitmq', 'postgres', 'sns-emulator', 'prometheus', 'grafana']) {
    assert.ok(services[name].healthcheck?.test, `${name} has a healthcheck`);
  }
});

test('one image, built once and named: every app service runs it, one builds it', () => {
  const builders = Object.entries(services).filter(([, s]) => s.build);
  assert.equal(builders.length, 1, `exactly one service builds: ${builders.map(([n]) => n).join(', ')}`);
  const [, builder] = builders[0];
  assert.equal(builder.image, IMAGE);
  assert.equal(builder.build, '.');
  assert.equal(builder.pull_policy, 'build', 'the named image is built from this checkout, never pulled');
  assert.ok(existsSync(new URL('Dockerfile', root)));
  // Anything that runs the repo's code (node ...) runs the image.
  for (const [name, service] of Object.entries(services)) {
    const argv = [...(service.entrypoint ?? []), ...(service.command ?? [])];
    if (argv[0] === 'node') assert.equal(service.image, IMAGE, `${name} runs node, so the app image`);
  }
});

test('every published host port is a variable with a default, and no two clash', () => {
  /** @type {Set<string>} */
  const variables = new Set();
  for (const [name, service] of Object.entries(services)) {
    for (const port of service.ports ?? []) {
      const match = /^\$\{([A-Z][A-Z0-9_]*_HOST_PORT):-(\d+)\}:(\d+)$/.exec(String(port));
      assert.ok(match, `${name}: "${port}" is not "\${NAME_HOST_PORT:-default}:container"`);
      assert.ok(!variables.has(match[1]), `${match[1]} is used twice`);
      variables.add(match[1]);
    }
  }
  for (const variable of ['REDIS_HOST_PORT', 'POSTGRES_HOST_PORT', 'RABBITMQ_HOST_PORT']) assert.ok(variables.has(variable), variable);
});

test('Prometheus scrapes every process type on the METRICS_PORT the compose file gives it', () => {
  const config = parse(read(mounted(services.prometheus, '/etc/prometheus/prometheus.yml')));
  /** @type {Map<string, Set<string>>} job → targets as host:port */
  const jobs = new Map();
  for (const job of config.scrape_configs) {
    const targets = new Set([
      ...(job.static_configs ?? []).flatMap((/** @type {any} */ c) => c.targets),
      ...(job.dns_sd_configs ?? []).flatMap((/** @type {any} */ c) => c.names.map((/** @type {string} */ n) => `${n}:${c.port}`))
    ]);
    jobs.set(job.job_name, targets);
  }
  for (const type of processTypes) {
    const target = `${type}:${services[type].environment.METRICS_PORT}`;
    assert.ok([...jobs.values()].some((targets) => targets.has(target)), `no scrape job has ${target}`);
  }
  // Every replica (--scale), not one at random: service names go through DNS discovery.
  for (const job of config.scrape_configs) assert.ok(job.dns_sd_configs && !job.static_configs, `${job.job_name} uses dns_sd_configs`);
});

test('Grafana is provisioned with the stack\'s Prometheus and the shipped dashboard file', () => {
  const grafana = services.grafana;
  const datasources = parse(read(mounted(grafana, '/etc/grafana/provisioning/datasources/pushpace.yml')));
  const prometheus = datasources.datasources.find((/** @type {any} */ d) => d.type === 'prometheus');
  assert.equal(prometheus.url, 'http://prometheus:9090');
  assert.ok(prometheus.isDefault, 'the dashboard\'s ${datasource} variable takes the default data source');
  const providers = parse(read(mounted(grafana, '/etc/grafana/provisioning/dashboards/pushpace.yml'))).providers;
  const folder = providers[0].options.path;
  const dashboard = (grafana.volumes ?? []).map((/** @type {string} */ v) => v.split(':')).find((/** @type {string[]} */ [, to]) => to.startsWith(`${folder}/`));
  assert.ok(dashboard, `no dashboard file is mounted into ${folder}`);
  assert.equal(dashboard[0], './docs/grafana-dashboard.json', 'the shipped dashboard, not a copy');
  const json = JSON.parse(read(dashboard[0]));
  assert.ok(json.panels.length > 10);
  assert.ok(!json.__inputs, 'a file-provisioned dashboard cannot ask for inputs');
});

test('the Grafana pacing row works where only some processes are scraped', () => {
  const panels = JSON.parse(read('docs/grafana-dashboard.json')).panels;
  const start = panels.findIndex((/** @type {any} */ p) => p.type === 'row' && /pacing/i.test(p.title));
  const end = panels.findIndex((/** @type {any} */ p, /** @type {number} */ i) => i > start && p.type === 'row');
  const row = panels.slice(start + 1, end);
  assert.ok(row.length >= 3);
  const exprs = row.flatMap((/** @type {any} */ p) => p.targets.map((/** @type {any} */ t) => t.expr));
  // Aggregated: one line per panel however many governors (and stand-bys) are scraped, and
  // through a lease handover.
  for (const expr of exprs) assert.match(expr, /^(max|min|sum)( by \([a-z, ]+\))? ?\(/, expr);
  // The rate in force comes from Redis through any process type: no governor scraped, still a line.
  assert.ok(exprs.includes('max(pushpace_token_bucket_rate_per_second)'));
});

test('pushctl runs as a one-off of the app image, never started by up; RabbitMQ is a current major', () => {
  const pushctl = services.pushctl;
  assert.equal(pushctl.image, IMAGE);
  assert.deepEqual(pushctl.entrypoint, ['node', 'producers/pushctl.js']);
  assert.deepEqual(pushctl.profiles, ['tools']);
  assert.deepEqual(services.governor.profiles, ['governor'], 'the governor needs gateway metrics first');
  assert.match(services.rabbitmq.image, /^rabbitmq:4[.-]/, '3.x is out of community support');
});
