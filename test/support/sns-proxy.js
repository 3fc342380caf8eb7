// A plain HTTP reverse proxy in front of the SNS emulator, for the publish-path contract
// suite: it keeps every request exactly as it arrived (headers and body, to check the
// signature and compare what the two paths put on the wire), and can reset the
// connection of every request instead of forwarding it (a TCP RST: what a load balancer
// or a dying SNS front end does), which the emulator itself cannot.
import http from 'node:http';

/**
 * @typedef {{ method: string, url: string, headers: import('node:http').IncomingHttpHeaders, body: string }} SeenRequest
 */

/**
 * Starts the proxy on a free port.
 * @param {string} target the emulator's base URL
 */
export async function startSnsProxy(target) {
  /** @type {SeenRequest[]} */
  const requests = [];
  let resetting = false;
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (resetting) {
        req.socket.resetAndDestroy();
        return;
      }
      const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      // The client gave up (a timeout): drop the upstream request too.
      res.on('close', () => upstream.destroy());
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  const url = await new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`)));
  return {
    /** @type {string} */
    url,
    requests,
    /** From now on every request is answered with a connection reset (true) or forwarded (false). @param {boolean} on */
    resetConnections(on) {
      resetting = on;
    },
    close() {
      agent.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve(undefined)));
    }
  };
}
