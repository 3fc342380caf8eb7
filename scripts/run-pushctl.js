// Runs pushctl as a child process, as a user would, for the tests, the benchmarks and
// the demo: one way to spawn it, so all of them run the same binary the same way.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PUSHCTL = fileURLToPath(new URL('../producers/pushctl.js', import.meta.url));

/**
 * Runs pushctl to completion and collects what it wrote. Waits for its output streams to
 * close, not only for it to exit: the last lines may still be in the pipe at exit.
 * @param {string[]} args  the command and its options: ['send', '--audience', ...]
 * @param {object} [options]
 * @param {Record<string, string | undefined>} [options.env]  its whole environment (default this process's)
 * @param {string[]} [options.nodeArgs]  node's own options before the script (--max-old-space-size=128, --import ...)
 * @param {string | Buffer} [options.input]  written to its standard input, which is then closed (default: no input at all)
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export async function runPushctl(args, { env = process.env, nodeArgs = [], input } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, PUSHCTL, ...args], { cwd: ROOT, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  // A child that stops reading early (a refusal before it reads) closes the pipe: not an error here.
  child.stdin?.on('error', () => {});
  child.stdin?.end(input);
  let stdout = '';
  let stderr = '';
  /** @type {import('node:stream').Readable} */ (child.stdout).setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
  /** @type {import('node:stream').Readable} */ (child.stderr).setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const [code] = await once(child, 'close');
  return { code, stdout, stderr };
}
