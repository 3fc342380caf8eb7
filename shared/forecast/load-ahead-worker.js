// The load-ahead thread's side (load-ahead-thread.js): one loadAhead per message, in turn.
import { parentPort } from 'node:worker_threads';
import { loadAhead } from './load-ahead.js';

if (!parentPort) throw new Error('load-ahead-worker.js runs as a worker thread (load-ahead-thread.js starts it)');
const port = parentPort;
port.on('message', (/** @type {{ id: number, model: any, campaign: any }} */ { id, model, campaign }) => {
  try {
    port.postMessage({ id, value: loadAhead(model, campaign) });
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
