// Throwaway redis-servers for tests that need their own (TLS, a cluster, an outage): a free
// port, a self-signed certificate, and a server started and waited for.
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { waitFor } from './harness.js';

/**
 * A port nothing listens on now, at most `highest` (a server that needs a number: redis-server's
 * --tls-port 0 turns TLS off; a cluster node's bus takes its port + 10000 as well).
 * @param {{ highest?: number }} [options]
 */
export async function freePort({ highest = 65_535 } = {}) {
  while (true) {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = /** @type {import('node:net').AddressInfo} */ (probe.address()).port;
    probe.close();
    await once(probe, 'close');
    if (port <= highest) return port;
  }
}

/**
 * A self-signed certificate for localhost and 127.0.0.1 in `dir`, as managed Redis presents one.
 * @param {string} dir
 * @returns {{ cert: string, key: string }} their paths
 */
export function selfSignedCert(dir) {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

/**
 * Starts `redis-server ARGS` in the foreground; resolves with the child once it accepts
 * connections, rejects (with its log) if it exits first.
 * @param {string[]} args
 * @param {string} what  for the timeout's message
 */
export async function startRedisServer(args, what) {
  const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout?.setEncoding('utf8').on('data', (chunk) => { log += chunk; });
  server.stderr?.setEncoding('utf8').on('data', (chunk) => { log += chunk; });
  try {
    await waitFor(async () => {
      if (server.exitCode !== null) throw new Error(`${what} exited ${server.exitCode}: ${log}`);
      return log.includes('Ready to accept connections');
    }, { timeoutMs: 10_000, intervalMs: 25, what });
  } catch (error) {
    if (server.exitCode === null) server.kill('SIGKILL');
    throw error;
  }
  return server;
}
