#!/usr/bin/env -S node --max-old-space-size=128
// pushctl: marketing's command line. Exit codes: 0 ok, 1 runtime failure, 2 bad input.
// The heap cap (also in the npm script) makes V8 collect garbage sooner instead of
// growing: enqueueing streams in fixed-size batches, so 128 MB of old space is
// ample for any audience size, and peak RSS stays under 200 MB (bench/RESULTS.md).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import { InputError, exitCodeFor } from '../shared/errors.js';
import { openContext } from './cli/context.js';

const USAGE = `usage: pushctl <command> [options]

  send --audience FILE | --query SQL --message FILE [--name NAME] [--rate N] [--strict] [--dry-run] [--yes] [--json]
       [--local-time HH:MM[:SS] [--default-timezone ZONE]]   each device at that time in its own zone
       [--deadline ISO8601] [--ttl 90m]     nothing is sent after it; unsent devices are counted as expired
  status ID [--watch] [--json]
  list [--json]
  pause ID | resume ID | cancel ID [--json]
  rate [RATE] [--burst N] [--json]     show, or set for every worker at once
  db migrate                           create or update the devices table in DATABASE_URL
  schedule add ID --cron EXPR | --at TIME --timezone ZONE  and send's audience, message and options
               [--missed skip|catch-up] [--grace 1h] [--dry-run] [--json]   a scheduler process sends it
  schedule list | show ID | pause ID | resume ID | remove ID   each with [--json]
`;

const OPTIONS = /** @type {const} */ ({
  audience: { type: 'string' }, query: { type: 'string' }, message: { type: 'string' }, name: { type: 'string' },
  rate: { type: 'string' }, burst: { type: 'string' }, strict: { type: 'boolean' }, 'dry-run': { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' }, json: { type: 'boolean' }, watch: { type: 'boolean', short: 'w' },
  help: { type: 'boolean', short: 'h' },
  cron: { type: 'string' }, at: { type: 'string' }, timezone: { type: 'string' }, missed: { type: 'string' }, grace: { type: 'string' },
  deadline: { type: 'string' }, ttl: { type: 'string' }, 'local-time': { type: 'string' }, 'default-timezone': { type: 'string' }
});

const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
process.exitCode = await main(process.argv.slice(2)).catch((error) => {
  io.stderr.write(`pushctl: ${error.message}\n`);
  return exitCodeFor(error);
});

/** @param {string[]} argv */
async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new InputError(`${/** @type {Error} */ (error).message}\n${USAGE}`);
  }
  const { values, positionals: [command, ...args] } = parsed;
  if (values.help || !command) {
    io.stdout.write(USAGE);
    return command || values.help ? 0 : 2;
  }
  const config = loadConfig(process.env);
  const needsId = ['status', 'pause', 'resume', 'cancel'].includes(command);
  if (needsId && !args[0]) throw new InputError(`${command} needs a campaign id\n${USAGE}`);
  if (command === 'db') {
    if (args[0] !== 'migrate') throw new InputError(`unknown db command "${args[0] ?? ''}"; try: pushctl db migrate`);
    const { migrateDevices } = await import('./cli/db.js');
    return migrateDevices(config, io);
  }
  if (!['send', 'status', 'list', 'pause', 'resume', 'cancel', 'rate', 'schedule'].includes(command)) {
    throw new InputError(`unknown command "${command}"\n${USAGE}`);
  }

  // What pushctl send is given; schedule add stores the same and replays it at each fire.
  const sendOptions = { ...values, dryRun: values['dry-run'], localTime: values['local-time'], defaultTimezone: values['default-timezone'] };
  const ctx = await openContext(config);
  try {
    // Commands are loaded on demand: `status` need not load BullMQ or the audience readers.
    switch (command) {
      case 'send': {
        const { send } = await import('./cli/send.js');
        return await send(ctx, sendOptions, io);
      }
      case 'schedule':
        return await (await import('./cli/schedule.js')).schedule(ctx, args, sendOptions, io);
      case 'status':
        return await (await import('./cli/status.js')).status(ctx, args[0], values, io);
      case 'list':
        return await (await import('./cli/status.js')).list(ctx, values, io);
      case 'rate':
        return await (await import('./cli/status.js')).rate(ctx, args[0], values, io);
      default: {
        const campaign = await ctx.store[/** @type {'pause' | 'resume' | 'cancel'} */ (command)](args[0]);
        io.stdout.write(values.json ? JSON.stringify({ id: campaign.id, state: campaign.state }) + '\n' : `${campaign.id} ${campaign.state}\n`);
        return 0;
      }
    }
  } finally {
    await ctx.close();
  }
}
