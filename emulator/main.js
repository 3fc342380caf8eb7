#!/usr/bin/env node
// Entry for the local SNS emulator process: reads config and flags, starts the
// server from sns-emulator.js and stops it on SIGTERM/SIGINT. Logic lives there.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import { exitCodeFor, InputError } from '../shared/errors.js';
import { createLogger } from '../shared/logger.js';
import { createSnsEmulator } from './sns-emulator.js';

const USAGE = `Usage: node emulator/main.js [--host 127.0.0.1] [--port 9911] [--faults '{"throttlePerSecond":100}']

  --host    address to bind; 0.0.0.0 only inside a container (default 127.0.0.1)
  --port    port to listen on (default SNS_EMULATOR_PORT, 9911)
  --faults  initial fault config as JSON, the body PUT /_emulator/faults takes`;

/**
 * Reads the command-line flags; errors name the flag.
 * @param {string[]} args
 * @param {number} defaultPort
 */
function readFlags(args, defaultPort) {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string' },
        faults: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false }
      }
    }));
  } catch (error) {
    throw new InputError(`${/** @type {Error} */ (error).message}\n${USAGE}`);
  }
  const port = values.port === undefined ? defaultPort : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InputError(`--port must be a whole number from 0 to 65535, got "${values.port}"`);
  }
  let faults = {};
  if (values.faults !== undefined) {
    try {
      faults = JSON.parse(values.faults);
    } catch (error) {
      throw new InputError(`--faults is not valid JSON: ${/** @type {Error} */ (error).message}`);
    }
  }
  return { host: values.host, port, faults, help: values.help };
}

async function main() {
  const config = loadConfig(process.env);
  const flags = readFlags(process.argv.slice(2), config.emulatorPort);
  if (flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const logger = createLogger(config, { process: 'sns-emulator' });
  // createSnsEmulator validates the faults and throws InputError naming the field.
  const emulator = createSnsEmulator({ region: config.sns.region, faults: flags.faults, logger });
  await emulator.listen(flags.port, flags.host);

  let stopping = false;
  /** @param {NodeJS.Signals} signal */
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'sns emulator shutting down');
    // The emulator holds nothing worth waiting for, but never outlive the platform's SIGKILL.
    setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'sns emulator did not close in time');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    await emulator.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  // Config and flag errors happen before a logger exists; stderr reaches the operator either way.
  process.stderr.write(`sns-emulator: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(exitCodeFor(error));
});
