// A small HTTP GET over keep-alive connections, for the metric sources. Polling every few
// seconds over a fresh TCP (and TLS) connection each time would add a handshake to every
// probe's latency and churn the gateway's connection table, so one Agent keeps them open.
import http from 'node:http';
import https from 'node:https';

/**
 * @typedef {object} HttpAnswer
 * @property {number} status
 * @property {string} contentType
 * @property {string} body
 */

/** Errors that are timeouts, told apart without matching on message text. */
const timeouts = new WeakSet();

/**
 * Whether `err` is a request that ran out of time (rather than one refused or reset).
 * @param {unknown} err
 */
export function isTimeout(err) {
  return typeof err === 'object' && err !== null && timeouts.has(err);
}

/**
 * A GET function with keep-alive agents, a timeout on the whole exchange (headers and body)
 * and a bound on the body size, plus `close()` to drop the pooled connections.
 * @param {{ timeoutMs: number, maxBodyBytes?: number, maxSockets?: number }} options
 */
export function createHttpGet({ timeoutMs, maxBodyBytes = 8 * 1024 * 1024, maxSockets = 8 }) {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets }),
    'https:': new https.Agent({ keepAlive: true, maxSockets })
  };

  /**
   * @param {string | URL} url
   * @param {Record<string, string>} [headers]
   * @returns {Promise<HttpAnswer>}
   */
  function get(url, headers = {}) {
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const signal = AbortSignal.timeout(timeoutMs);
    return new Promise((resolve, reject) => {
      /** @param {unknown} cause */
      const fail = (cause) => {
        if (!signal.aborted) {
          reject(new Error(`GET ${target.origin}${target.pathname} failed: ${/** @type {Error} */ (cause)?.message ?? cause}`, { cause }));
          return;
        }
        const err = new Error(`GET ${target.origin}${target.pathname} timed out after ${timeoutMs} ms`, { cause });
        timeouts.add(err);
        reject(err);
      };
      const req = transport.get(target, { agent, headers, signal }, (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        let size = 0;
        // The request's signal destroys the socket, but say so on the response as well, so a
        // body that trickles in forever ends in a timeout rather than a hang.
        const onAbort = () => res.destroy(new Error('aborted'));
        signal.addEventListener('abort', onAbort, { once: true });
        res.on('data', (chunk) => {
          size += chunk.length;
          if (size > maxBodyBytes) res.destroy(new Error(`answer larger than ${maxBodyBytes} bytes`));
          else chunks.push(chunk);
        });
        res.on('error', (err) => { signal.removeEventListener('abort', onAbort); fail(err); });
        res.on('end', () => {
          signal.removeEventListener('abort', onAbort);
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8')
          });
        });
      });
      req.on('error', fail);
    });
  }

  return {
    get,
    /** Drops the pooled connections. */
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    }
  };
}
