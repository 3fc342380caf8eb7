#!/usr/bin/env -S node --max-old-space-size=128
// pushctl: marketing's command line. Exit codes: 0 ok, 1 runtime failure, 2 bad input
// (and 3 from status --watch --exit-status: the campaign ended without completing).
// The heap cap (also in the npm script) makes V8 collect garbage sooner instead of
// growing: enqueueing streams in fixed-size batches, so 128 MB of old space is
// ample for any audience size, and peak RSS stays under 200 MB (bench/RESULTS.md).
import { readFileSync } from 'node:fs';
import { loadConfig } from '../config/index.js';
import { exitCodeFor } from '../shared/errors.js';
import { openContext } from './cli/context.js';
import { runCommandLine } from './cli/program.js';

/**
 * @typedef {import('./cli/context.js').Context} Context
 * @typedef {import('./cli/program.js').Parsed} Parsed
 * @typedef {import('./cli/program.js').CommandSpec} CommandSpec
 * @typedef {import('./cli/program.js').OptionSpec} OptionSpec
 */

const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
// `pushctl list | head`: a reader that stops early closes the pipe; that is the end of the output, not an error.
process.stdout.on('error', (error) => { if (/** @type {NodeJS.ErrnoException} */ (error).code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw error; });

/**
 * Every option, once; each command below names the ones it takes, and nothing else is
 * accepted. The send options are shared by send and schedule add, which stores them.
 * @type {Record<string, OptionSpec>}
 */
const OPTIONS = {
  audience: { flags: '--audience <file>', description: 'the audience: CSV with a header, or NDJSON (endpointArn, platform; userId, locale, timezone); - reads standard input (send, with --format)' },
  query: { flags: '--query <sql>', description: 'the audience from PostgreSQL (DATABASE_URL): a SELECT returning endpoint_arn and platform, run read-only' },
  to: {
    flags: '--to <arn>', description: 'a test send to this one device endpoint, now, instead of a campaign',
    conflicts: ['audience', 'query', 'name', 'kind', 'rate', 'strict', 'localTime', 'defaultTimezone', 'deadline', 'ttl', 'format']
  },
  message: { flags: '--message <file>', description: 'the message file (JSON: title, body, locales, data...)' },
  name: { flags: '--name <name>', description: 'the campaign\'s name (default: the message file\'s name)' },
  kind: { flags: '--kind <kind>', description: 'the message kind (sale, digest...): the governor learns each kind\'s wake-up traffic apart (docs/pacing.md, "Memory")' },
  rate: { flags: '--rate <n>', description: 'sends/s cap for this campaign, below the shared rate' },
  strict: { flags: '--strict', description: 'reject the whole campaign if any audience line is invalid (default: skip and report them)' },
  dryRun: { flags: '--dry-run', description: 'check and count everything, send and store nothing' },
  yes: { flags: '-y, --yes', description: 'no confirmation prompt (send asks above CONFIRM_THRESHOLD devices)' },
  json: { flags: '--json', description: 'print JSON, for scripts' },
  localTime: { flags: '--local-time <hh:mm[:ss]>', description: 'send to each device at this time on its own clock (its audience timezone)' },
  defaultTimezone: { flags: '--default-timezone <zone>', description: 'the zone of devices without one (default DEFAULT_TIMEZONE)' },
  deadline: { flags: '--deadline <iso8601>', description: 'send nothing after this instant (with a zone: Z or +03:00); the rest is counted expired' },
  ttl: { flags: '--ttl <duration>', description: 'send nothing later than this after the start (90m, 2h, 1h30m; with --local-time, after each zone\'s release)' },
  watch: { flags: '-w, --watch', description: 'follow the progress on one line until the campaign finishes' },
  exitStatus: { flags: '--exit-status', description: 'with --watch: exit 3 if the campaign ends cancelled, expired or failed (0 if it completed)' },
  burst: { flags: '--burst <n>', description: 'the token bucket\'s size: sends that may go out at once after a pause (default 5% of the rate, at least 1)' },
  cron: { flags: '--cron <expr>', description: 'repeating: a five-field cron expression ("0 9 * * mon")' },
  at: { flags: '--at <time>', description: 'once, at this local time (2027-06-01T12:00)' },
  timezone: { flags: '--timezone <zone>', description: 'the IANA zone --cron and --at are read in (Europe/Helsinki)' },
  missed: { flags: '--missed <policy>', description: 'a fire missed while no scheduler ran: skip, or catch-up (default)' },
  format: { flags: '--format <format>', description: 'csv or ndjson: what failures writes (default csv; its CSV is readable by send --audience), what send --audience - reads (required there)' },
  output: { flags: '-o, --output <file>', description: 'write to this file (created owner-only) instead of stdout' },
  grace: { flags: '--grace <duration>', description: 'with --missed catch-up: how late a missed fire may still be sent (default SCHEDULE_GRACE_MINUTES)' }
};

const SEND_OPTIONS = ['audience', 'query', 'message', 'name', 'kind', 'rate', 'strict', 'localTime', 'defaultTimezone', 'deadline', 'ttl'];

/**
 * Every command, once: its name, arguments, options and help, and how it runs. Commands
 * are loaded on demand: `status` need not load BullMQ or the audience readers.
 * @type {CommandSpec[]}
 */
const COMMANDS = [
  {
    name: 'send',
    summary: 'send a campaign to an audience (prints its id), or a test to one device (--to)',
    options: [...SEND_OPTIONS.slice(0, 2), 'format', 'to', ...SEND_OPTIONS.slice(2), 'dryRun', 'yes', 'json'],
    details: `Exactly one of --audience, --query or --to. Nothing is enqueued unless the whole
audience and the message are valid; invalid lines are skipped and reported
(--strict refuses instead).

--audience - reads the audience from standard input, in --format csv or ndjson
(for heroku run, which has none of your files). It is copied to a temporary file
first (removed when send ends), because it is checked in full before anything is
stored and then read again to enqueue. Above CONFIRM_THRESHOLD devices add --yes:
standard input is the audience, not a terminal to answer on.

--to ARN is a test send, not a campaign: the message is checked as for a
campaign, then published once to that endpoint through the same SNS client,
publish and retries every send uses, with one token from the shared rate's
transactional lane (never over the rate, not queued behind a running campaign).
It prints SNS's answer and exits 0 if delivered, 1 if not (disabled, failed, or
sending stopped by rate 0).

Examples:
  pushctl send --audience users.csv --message sale.json --name "Friday sale" --yes
  pushctl send --audience users.csv --message digest.json --local-time 09:00 --ttl 2h
  heroku run pushctl send --audience - --format csv --message sale.json --yes < users.csv
  pushctl send --to arn:aws:sns:eu-west-1:123456789012:endpoint/GCM/app/0f3c... \\
    --message sale.json`,
    run: withContext(async (ctx, { options }) => options.to === undefined
      ? (await import('./cli/send.js')).send(ctx, launchOptions(options), io)
      : (await import('./cli/test-send.js')).testSend(ctx, options, io))
  },
  {
    name: 'status',
    summary: 'a campaign\'s progress, counts and timing',
    args: '<campaign-id>',
    options: ['watch', 'exitStatus', 'json'],
    details: `With --watch, one line redrawn every second until the campaign finishes, laid
out to the terminal's width (80 columns when stdout is not a terminal).
Exit status with --watch --exit-status: 0 completed, 3 cancelled, expired or
failed (1 and 2 keep their meaning: pushctl itself failed or was misused).`,
    run: withContext(async (ctx, { args, options }) => (await import('./cli/status.js')).status(ctx, String(args[0]), options, io))
  },
  {
    name: 'report',
    summary: 'how a campaign went: outcomes, duration, rate and gateway p95 over time, forecast',
    args: '<campaign-id>',
    options: ['json'],
    details: `Works while it runs and until the campaign is removed (CAMPAIGN_RETENTION_DAYS).
The rate and the gateway's p95 against the SLO come from the campaign's history, a
point every 15 s or more written by the workers and web processes (the p95 only
while a governor runs). "learned" and "forecast" show what the governor stored
for the campaign, or "not recorded".`,
    run: withContext(async (ctx, { args, options }) => (await import('./cli/report.js')).report(ctx, String(args[0]), options, io))
  },
  {
    name: 'failures',
    summary: 'export a campaign\'s devices not delivered (disabled, failed, expired, cancelled)',
    args: '<campaign-id>',
    options: ['format', 'output'],
    details: `One row per device: endpointArn, platform, userId, outcome, reason. The CSV is
an audience file: fix it and send it again with pushctl send --audience. The rows
identify devices: they go to stdout or --output only, never to a log; a count
goes to stderr.

Examples:
  pushctl failures c-mwrfi8tu-d82412 --format csv --output retry.csv
  pushctl failures c-mwrfi8tu-d82412 --format ndjson | jq -r .reason | sort | uniq -c`,
    run: async (parsed) => {
      // Checked before Redis is opened: a typo is refused the same way with or without it.
      const format = (await import('../shared/campaign/failure-export.js')).failureFormat(parsed.options.format);
      return withContext(async (ctx, { args, options }) =>
        (await import('./cli/report.js')).failures(ctx, String(args[0]), { format, output: options.output }, io))(parsed);
    }
  },
  {
    name: 'list',
    summary: 'the newest 50 campaigns, and every campaign still running',
    options: ['json'],
    run: withContext(async (ctx, { options }) => (await import('./cli/status.js')).list(ctx, options, io))
  },
  {
    name: 'pause', summary: 'pause a running campaign: workers stop taking its devices', args: '<campaign-id>', options: ['json'],
    run: withContext((ctx, parsed) => setState(ctx, 'pause', parsed))
  },
  {
    name: 'resume', summary: 'resume a paused campaign where it stopped', args: '<campaign-id>', options: ['json'],
    run: withContext((ctx, parsed) => setState(ctx, 'resume', parsed))
  },
  {
    name: 'cancel', summary: 'cancel a running or paused campaign; its unsent devices are counted cancelled', args: '<campaign-id>', options: ['json'],
    details: 'Cancelling a campaign that is already cancelled changes nothing, says so and exits 0.',
    run: withContext((ctx, parsed) => setState(ctx, 'cancel', parsed))
  },
  {
    name: 'rate',
    summary: 'show the shared rate, or set it for every worker at once',
    args: '[rate]',
    options: ['burst', ['yes', 'confirm rate 0, which stops every send'], 'json'],
    details: `RATE is sends per second for all workers together, a plain decimal number
(500, 12.5). It takes effect at once, until it is set again (by pushctl rate or
the governor).

  pushctl rate            show it ("stopped" when it is 0)
  pushctl rate 500        set it
  pushctl rate 0 --yes    stop all sending: every campaign and transactional
                          send waits until pushctl rate N`,
    run: withContext(async (ctx, { args, options }) => (await import('./cli/rate.js')).rate(ctx, args[0], options, io))
  },
  {
    name: 'model',
    summary: 'what the governor learned of past campaigns\' wake-up traffic, and the prior of the next',
    details: 'When a campaign ends, the governor keeps its requests per send and open-delay shape;\nthe next campaign starts from their age-weighted average, its own kind first\n(send --kind; docs/pacing.md, "Memory").'
  },
  {
    name: 'model show', summary: 'the remembered campaigns and the prior the next one starts from (--kind: the next of that kind)', options: ['kind', 'json'],
    run: withContext(async (ctx, { options }) => (await import('./cli/model.js')).show(ctx, options, io))
  },
  {
    name: 'model reset', summary: 'forget them: the next campaign starts from PACING_* again', options: ['json'],
    run: withContext(async (ctx, { options }) => (await import('./cli/model.js')).reset(ctx, options, io))
  },
  { name: 'db', summary: 'the devices table of --query audiences' },
  {
    name: 'db migrate', summary: 'create or update the devices table in DATABASE_URL',
    run: async () => (await import('./cli/db.js')).migrateDevices(loadConfig(process.env), io)
  },
  {
    name: 'schedule',
    summary: 'planned sends (cron or once, in a time zone), launched by the scheduler process',
    details: 'Each fire launches a campaign as pushctl send would, with the options stored\nby schedule add (docs/scheduling.md).'
  },
  {
    name: 'schedule add',
    summary: 'add a schedule: when, and send\'s audience, message and options (checked now, as a launch would)',
    args: '<schedule-id>',
    options: ['cron', 'at', 'timezone', 'missed', 'grace', ...SEND_OPTIONS, ['dryRun', 'check everything, store nothing'], 'json'],
    details: `Examples:
  pushctl schedule add weekly-digest --cron "0 9 * * mon" \\
    --timezone Europe/Helsinki --audience users.csv --message digest.json
  pushctl schedule add sale-opens --at 2027-06-01T12:00 \\
    --timezone America/New_York --query "SELECT ..." --message sale.json`,
    run: scheduleCommand('add')
  },
  { name: 'schedule list', summary: 'every schedule, its next and last fire', options: ['json'], run: scheduleCommand('list') },
  { name: 'schedule show', summary: 'one schedule, its options and recent fires', args: '<schedule-id>', options: ['json'], run: scheduleCommand('show') },
  { name: 'schedule pause', summary: 'stop firing a schedule until resumed', args: '<schedule-id>', options: ['json'], run: scheduleCommand('pause') },
  { name: 'schedule resume', summary: 'fire a paused schedule again, from its next fire', args: '<schedule-id>', options: ['json'], run: scheduleCommand('resume') },
  { name: 'schedule remove', summary: 'remove a schedule (a fire being launched now completes)', args: '<schedule-id>', options: ['json'], run: scheduleCommand('remove') }
];

const DESCRIPTION = 'Sends push notifications through AWS SNS at one shared rate for every worker.';
const EPILOGUE = `pushctl help COMMAND (or pushctl COMMAND --help) shows a command's options.
Exit codes: 0 ok, 1 runtime failure (Redis or PostgreSQL unreachable...),
2 bad input. Settings come from environment variables (README.md).`;

process.exitCode = await runCommandLine(process.argv.slice(2), {
  commands: COMMANDS, options: OPTIONS, description: DESCRIPTION, epilogue: EPILOGUE, io,
  version: JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
}).catch((error) => {
  io.stderr.write(`pushctl: ${error.message}\n`);
  return exitCodeFor(error);
});

/**
 * A command's run with the config read and Redis, the campaign store and the bucket open,
 * closed however it ends.
 * @param {(ctx: Context, parsed: Parsed) => Promise<number>} run
 * @returns {(parsed: Parsed) => Promise<number>}
 */
function withContext(run) {
  return async (parsed) => {
    const ctx = await openContext(loadConfig(process.env));
    try {
      return await run(ctx, parsed);
    } finally {
      await ctx.close();
    }
  };
}

/**
 * What pushctl send is given, as send and the launch read it and as schedule add stores
 * it (and the scheduler replays it): flags by their command-line names ('local-time'),
 * with the camelCase names the launch reads beside them.
 * @param {Record<string, any>} options commander's, by camelCase name
 */
function launchOptions(options) {
  /** @type {Record<string, any>} */
  const flags = {};
  for (const [key, value] of Object.entries(options)) flags[key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)] = value;
  return { ...flags, dryRun: options.dryRun, localTime: options.localTime, defaultTimezone: options.defaultTimezone };
}

/** @param {'add' | 'list' | 'show' | 'pause' | 'resume' | 'remove'} subcommand */
function scheduleCommand(subcommand) {
  return withContext(async (ctx, { args, options }) =>
    (await import('./cli/schedule.js')).schedule(ctx, [subcommand, ...args.filter((arg) => arg !== undefined)], launchOptions(options), io));
}

/**
 * pause, resume or cancel a campaign. A cancel of a campaign already cancelled succeeds,
 * saying so: a script that cancels twice (a retry, two operators) has what it asked for.
 * @param {Context} ctx @param {'pause' | 'resume' | 'cancel'} action @param {Parsed} parsed
 */
async function setState(ctx, action, { args, options }) {
  const campaign = await ctx.store[action](String(args[0]));
  const already = action === 'cancel' && campaign.previousState === 'cancelled';
  io.stdout.write(options.json
    ? JSON.stringify({ id: campaign.id, state: campaign.state, ...(action === 'cancel' ? { alreadyCancelled: already } : {}) }) + '\n'
    : `${campaign.id} ${already ? 'was already cancelled' : campaign.state}\n`);
  return 0;
}
