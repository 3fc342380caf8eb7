#!/usr/bin/env -S node --max-old-space-size=128
// pushctl: marketing's command line. Exit codes: 0 ok, 1 runtime failure, 2 bad input.
// The heap cap (also in the npm script) makes V8 collect garbage sooner instead of
// growing: enqueueing streams in fixed-size batches, so 128 MB of old space is
// ample for any audience size, and peak RSS stays under 200 MB (bench/RESULTS.md).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import { InputError, exitCodeFor } from '../shared/errors.js';
import { openContext } from './cli/context.js';

/**
 * Every command, once: its lines of the usage text, whether it needs a campaign id, whether
 * it opens Redis (the context), and how it runs. Commands are loaded on demand: `status`
 * need not load BullMQ or the audience readers.
 * @typedef {{ stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream, stdin: NodeJS.ReadStream }} IO
 * @typedef {import('./cli/context.js').Context} Context
 * @typedef {ReturnType<typeof parseArgs<{ options: typeof OPTIONS, allowPositionals: true, strict: true }>>['values']} Values
 * @typedef {{ values: Values, send: import('./cli/send.js').SendOptions, args: string[], io: IO }} Call
 * @typedef {object} Command
 * @property {string} [usage]       its lines in the usage text (a command described with another has none)
 * @property {boolean} [needsId]    the first argument is a campaign id
 * @property {(config: import('../config/index.js').Config, call: Call) => Promise<number>} [runWithoutContext]
 * @property {(ctx: Context, call: Call) => Promise<number>} [run]
 */
/** @type {Record<string, Command>} */
const COMMANDS = {
  send: {
    usage: `  send --audience FILE | --query SQL --message FILE [--name NAME] [--rate N] [--strict] [--dry-run] [--yes] [--json]
       [--local-time HH:MM[:SS] [--default-timezone ZONE]]   each device at that time in its own zone
       [--deadline ISO8601] [--ttl 90m]     nothing is sent after it; unsent devices are counted as expired`,
    run: async (ctx, { send, io }) => (await import('./cli/send.js')).send(ctx, send, io)
  },
  status: {
    usage: '  status ID [--watch] [--json]',
    needsId: true,
    run: async (ctx, { args, values, io }) => (await import('./cli/status.js')).status(ctx, args[0], values, io)
  },
  list: {
    usage: '  list [--json]',
    run: async (ctx, { values, io }) => (await import('./cli/status.js')).list(ctx, values, io)
  },
  pause: { usage: '  pause ID | resume ID | cancel ID [--json]', needsId: true, run: (ctx, call) => setState(ctx, 'pause', call) },
  resume: { needsId: true, run: (ctx, call) => setState(ctx, 'resume', call) },
  cancel: { needsId: true, run: (ctx, call) => setState(ctx, 'cancel', call) },
  rate: {
    usage: '  rate [RATE] [--burst N] [--json]     show, or set for every worker at once',
    run: async (ctx, { args, values, io }) => (await import('./cli/status.js')).rate(ctx, args[0], values, io)
  },
  db: {
    usage: '  db migrate                           create or update the devices table in DATABASE_URL',
    async runWithoutContext(config, { args, io }) {
      if (args[0] !== 'migrate') throw new InputError(`unknown db command "${args[0] ?? ''}"; try: pushctl db migrate`);
      return (await import('./cli/db.js')).migrateDevices(config, io);
    }
  },
  schedule: {
    usage: `  schedule add ID --cron EXPR | --at TIME --timezone ZONE  and send's audience, message and options
               [--missed skip|catch-up] [--grace 1h] [--dry-run] [--json]   a scheduler process sends it
  schedule list | show ID | pause ID | resume ID | remove ID   each with [--json]`,
    run: async (ctx, { args, send, io }) => (await import('./cli/schedule.js')).schedule(ctx, args, send, io)
  }
};

const USAGE = `usage: pushctl <command> [options]

${Object.values(COMMANDS).flatMap((command) => command.usage ?? []).join('\n')}
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
  const entry = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!entry) throw new InputError(`unknown command "${command}"\n${USAGE}`);
  if (entry.needsId && !args[0]) throw new InputError(`${command} needs a campaign id\n${USAGE}`);
  // What pushctl send is given; schedule add stores the same and replays it at each fire.
  const send = { ...values, dryRun: values['dry-run'], localTime: values['local-time'], defaultTimezone: values['default-timezone'] };
  const call = { values, send, args, io };
  if (entry.runWithoutContext) return entry.runWithoutContext(config, call);
  const ctx = await openContext(config);
  try {
    return await /** @type {NonNullable<Command['run']>} */ (entry.run)(ctx, call);
  } finally {
    await ctx.close();
  }
}

/**
 * pause, resume or cancel a campaign.
 * @param {Context} ctx @param {'pause' | 'resume' | 'cancel'} action @param {Call} call
 */
async function setState(ctx, action, { args, values, io }) {
  const campaign = await ctx.store[action](args[0]);
  io.stdout.write(values.json ? JSON.stringify({ id: campaign.id, state: campaign.state }) + '\n' : `${campaign.id} ${campaign.state}\n`);
  return 0;
}
