// A throwaway Redis Cluster for tests: three primaries (no replicas) on free ports of
// 127.0.0.1, their files in a temporary directory, nothing kept on disk. With `tls`, the
// nodes speak only TLS (clients and the cluster bus) with a self-signed certificate made
// here, as managed Redis does. stop() kills the servers and removes the directory; it is
// safe to call after a failed start.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './harness.js';
import { freePort, selfSignedCert, startRedisServer } from './local-redis.js';

const run = promisify(execFile);

/**
 * Starts the cluster; resolves once CLUSTER INFO says cluster_state:ok on every node.
 * @param {{ primaries?: number, tls?: boolean }} [options]
 */
export async function startRedisCluster({ primaries = 3, tls = false } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'pushpace-cluster-'));
  const cert = join(dir, 'cert.pem');
  // Server side: TLS on the client port (--port 0 turns plain TCP off) and on the bus.
  /** @param {number} port */
  const listenArgs = (port) => tls
    ? ['--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-cert-file', cert,
        '--tls-key-file', join(dir, 'key.pem'), '--tls-ca-cert-file', cert, '--tls-auth-clients', 'no']
    : ['--port', String(port)];
  // redis-cli's side: it trusts the certificate made here.
  const cliArgs = tls ? ['--tls', '--cacert', cert] : [];
  /** @type {import('node:child_process').ChildProcess[]} */
  const servers = [];
  /** @type {number[]} */
  const ports = [];
  const stop = async () => {
    for (const server of servers) {
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGKILL');
        await once(server, 'exit');
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    if (tls) selfSignedCert(dir);
    for (let i = 0; i < primaries; i++) {
      const port = await freePort({ highest: 65_535 - 10_000 });
      servers.push(await startRedisServer([...listenArgs(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '5000', '--dir', dir,
        '--save', '', '--appendonly', 'no', '--daemonize', 'no'], `redis-server on ${port}`));
      ports.push(port);
    }
    await run('redis-cli', [...cliArgs, '--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas', '0', '--cluster-yes'], { timeout: 20_000 });
    // `create` returns once the slots are assigned; each node says ok once gossip agrees.
    await waitFor(async () => {
      const infos = await Promise.all(ports.map((port) => run('redis-cli', [...cliArgs, '-p', String(port), 'cluster', 'info'], { timeout: 5000 })));
      return infos.every(({ stdout }) => stdout.includes('cluster_state:ok'));
    }, { timeoutMs: 20_000, intervalMs: 100, what: 'cluster_state:ok on every node' });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `${tls ? 'rediss' : 'redis'}://127.0.0.1:${ports[0]}`, ports, stop };
}
