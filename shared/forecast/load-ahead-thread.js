// load-ahead.js in a worker thread, for the web process: a replay of the controller takes
// tens to hundreds of milliseconds of CPU (more for a campaign that has sent for an hour),
// and on the web process's event loop that stalls every viewer's overview and chart for as
// long. One thread, started on first use, runs the requests in turn; if it dies, the
// requests waiting on it fail and the next one starts a new thread.
import { Worker } from 'node:worker_threads';

/**
 * @typedef {object} LoadAheadThread
 * @property {(model: import('./campaign-forecast.js').LiveModel, campaign: Parameters<typeof import('./load-ahead.js').loadAhead>[1]) =>
 *   Promise<import('./load-ahead.js').LoadAhead>} compute
 * @property {() => Promise<void>} close
 */

/** @returns {LoadAheadThread} */
export function createLoadAheadThread() {
  /** @type {Worker | null} */
  let worker = null;
  let nextId = 0;
  /** @type {Map<number, { thread: Worker, resolve: (value: any) => void, reject: (error: Error) => void }>} */
  const waiting = new Map();

  /** The requests a thread had taken fail with it (not those of the one that replaced it). @param {Worker} thread @param {Error} error */
  function failAll(thread, error) {
    for (const [id, request] of waiting) {
      if (request.thread !== thread) continue;
      waiting.delete(id);
      request.reject(error);
    }
  }

  function start() {
    const thread = new Worker(new URL('./load-ahead-worker.js', import.meta.url));
    // The web process exits when its server closes, whether or not the thread is idle.
    thread.unref();
    thread.on('message', (/** @type {{ id: number, value?: any, error?: string }} */ { id, value, error }) => {
      const request = waiting.get(id);
      if (!request) return;
      waiting.delete(id);
      if (error === undefined) request.resolve(value);
      else request.reject(new Error(error));
    });
    thread.on('error', (error) => {
      if (worker === thread) worker = null;
      failAll(thread, error);
    });
    thread.on('exit', (code) => {
      if (worker === thread) worker = null;
      failAll(thread, new Error(`the load-ahead thread exited (code ${code})`));
    });
    return thread;
  }

  return {
    compute(model, campaign) {
      worker ??= start();
      const id = nextId++;
      const thread = worker;
      return new Promise((resolve, reject) => {
        waiting.set(id, { thread, resolve, reject });
        thread.postMessage({ id, model, campaign });
      });
    },
    async close() {
      const thread = worker;
      worker = null;
      if (thread) await thread.terminate();
    }
  };
}
