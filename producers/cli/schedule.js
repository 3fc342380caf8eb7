// pushctl schedule add|list|show|pause|resume|remove. A scheduler process launches each
// fire (shared/scheduler/launch-fire.js) with the send options stored here.
import { basename, resolve } from 'node:path';
import { InputError } from '../../shared/errors.js';
import { readMessageFile } from '../../shared/sns/message.js';
import { chooseAudience } from '../../shared/audience/open-source.js';
import { createScheduleStore } from '../../shared/scheduler/schedule-store.js';
import { scheduleTiming, checkScheduleId, nextFire } from '../../shared/scheduler/schedule-spec.js';
import { describeSchedule } from '../../shared/scheduler/schedule-view.js';
import { formatZoned } from '../../shared/zoned-time.js';
import { formatCount, formatTable, formatWarning } from './format.js';

/** @typedef {import('./context.js').Context} Context */
/** @typedef {import('../../shared/scheduler/schedule-spec.js').Schedule} Schedule */
/** @typedef {import('../../shared/scheduler/schedule-store.js').ScheduleRecord} ScheduleRecord */
/** @typedef {import('../../shared/scheduler/schedule-store.js').ScheduleStore} ScheduleStore */
/** @typedef {{ stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream, stdin: NodeJS.ReadStream }} IO */
/** @typedef {Record<string, string | boolean | undefined>} Options pushctl's parsed options, as send gets them */

/**
 * Options that belong to schedule add or to pushctl itself, not to pushctl send: they are
 * not stored with the schedule. Everything else is (audience or query, name, rate,
 * strict, and any send flag such as --deadline, --ttl or --local-time).
 */
const NOT_SEND_OPTIONS = new Set(['cron', 'at', 'timezone', 'missed', 'grace', 'json', 'yes', 'dry-run', 'dryRun', 'help', 'watch', 'burst']);
const COMMANDS = 'add, list, show, pause, resume or remove';

/**
 * @param {Context} ctx
 * @param {string[]} args  what follows `schedule`: the subcommand and its id
 * @param {Options} options
 * @param {IO} io
 */
export async function schedule(ctx, args, options, io) {
  const [command, id, ...extra] = args;
  if (extra.length > 0) throw new InputError(`schedule ${command}: unexpected argument "${extra[0]}"`);
  const store = createScheduleStore(ctx.redis, ctx.config);
  switch (command) {
    case 'add':
      return add(ctx, store, id, options, io);
    case 'list':
      if (id !== undefined) throw new InputError(`schedule list takes no id (pushctl schedule show ${id})`);
      return list(ctx, store, options, io);
    case 'show':
      return show(ctx, store, checkScheduleId(id, 'schedule show'), options, io);
    case 'pause':
    case 'resume': {
      checkScheduleId(id, `schedule ${command}`);
      const record = command === 'pause' ? await store.pause(id) : await store.resume(id, Date.now());
      const { state } = describeSchedule(record, Date.now(), ctx.config.scheduler.toleranceMs);
      io.stdout.write(options.json ? JSON.stringify({ id, state }) + '\n' : `${id} ${state}\n`);
      return 0;
    }
    case 'remove': {
      checkScheduleId(id, 'schedule remove');
      const { launching } = await store.remove(id);
      // A fire being launched right now completes (its campaign may be part-way enqueued).
      const note = launching.length === 0 ? '' : `; the fire of ${launching.map(iso).join(', ')} being launched now completes (pushctl cancel stops its campaign)`;
      io.stdout.write(options.json ? JSON.stringify({ id, state: 'removed', launching: launching.map(iso) }) + '\n' : `${id} removed${note}\n`);
      return 0;
    }
    default:
      throw new InputError(command ? `unknown schedule command "${command}"; use ${COMMANDS}` : `schedule needs a command: ${COMMANDS}`);
  }
}

/**
 * Validates everything, by the same checks a launch makes (its plan, storing nothing), and
 * stores the schedule only if all pass.
 * @param {Context} ctx
 * @param {ScheduleStore} store
 * @param {string | undefined} id
 * @param {Options} options
 * @param {IO} io
 */
async function add(ctx, store, id, options, io) {
  const now = Date.now();
  const timing = scheduleTiming({
    id, cron: text(options.cron), at: text(options.at), timeZone: text(options.timezone),
    missed: text(options.missed), grace: text(options.grace)
  }, { now, defaultGraceMs: ctx.config.scheduler.defaultGraceMs, minIntervalMs: ctx.config.scheduler.minIntervalMs });
  chooseAudience(options, 'schedule add');
  // Checked again atomically when storing; asking first spares a scan of the audience.
  if (!options.dryRun && await store.get(timing.id)) {
    throw new InputError(`schedule "${timing.id}" already exists; remove it first (pushctl schedule remove ${timing.id}) or choose another id`);
  }
  const messageFile = text(options.message);
  if (!messageFile) throw new InputError('schedule add needs --message FILE: the announcement to send');
  // Parsed now and stored: an edit of the file later cannot change a planned announcement.
  const message = await readMessageFile(messageFile);

  /** @type {Record<string, string | boolean>} */
  const sendOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !NOT_SEND_OPTIONS.has(key)) sendOptions[key] = value;
  }
  // The scheduler may run in another directory: files are kept by absolute path.
  sendOptions.message = resolve(messageFile);
  if (typeof options.audience === 'string') sendOptions.audience = resolve(options.audience);
  sendOptions.name = text(options.name) ?? basename(messageFile);

  // The audience and every send option are checked as a launch checks them, by the
  // launch's own plan (loaded only now: a schedule refused above need not load the
  // audience readers). Local times and TTLs are planned from the first fire, as they
  // will be at each fire.
  const { parseLaunchRequest } = await import('../../shared/campaign/launch-request.js');
  const { prepareLaunch } = await import('../../shared/campaign/launch.js');
  const request = await parseLaunchRequest(sendOptions, {
    command: 'schedule add', now, startAt: nextFire(timing, now) ?? now, defaultTimezone: ctx.config.defaultTimezone, message
  });
  const plan = await prepareLaunch(request, { config: ctx.config, store: ctx.store, bucket: ctx.bucket });
  await plan.close();
  const { forecastLaunch, forecastJson, describeForecast } = await import('./forecast.js');
  const firstFire = nextFire(timing, now) ?? now;
  const { firstSendAt } = await import('../../shared/forecast/launch-forecast.js');
  const forecast = await forecastLaunch(ctx, {
    devices: plan.devices, rate: plan.rate, maxRate: request.maxRate, kind: request.kind, startAt: firstSendAt(request, plan, firstFire)
  });
  for (const warning of plan.warnings) io.stderr.write(formatWarning(warning));

  /** @type {Schedule} */
  const spec = { ...timing, send: sendOptions, message, messageSource: resolve(messageFile) };
  if (!options.dryRun) await store.add(spec);
  const view = describeSchedule({ schedule: spec, enabled: true, after: now }, now, ctx.config.scheduler.toleranceMs);
  if (options.json) {
    io.stdout.write(JSON.stringify({ ...view, stored: !options.dryRun, devicesNow: plan.devices, forecast: forecastJson(forecast) }) + '\n');
    return 0;
  }
  io.stdout.write([
    `${options.dryRun ? 'dry run, nothing stored: ' : ''}schedule ${spec.id}: ${when(spec)}; missed fires: ${policy(spec)}`,
    view.nextFireAt === null ? 'it never fires again' :
      `next fire ${formatZoned(view.nextFireAt, spec.timeZone)} = ${iso(view.nextFireAt)}, as campaign ${view.nextCampaignId}`,
    `audience now: ${formatCount(plan.devices)} devices${plan.skipped ? ` (${formatCount(plan.skipped)} invalid lines skipped)` : ''}`,
    describeForecast(forecast)
  ].join('\n') + '\n');
  return 0;
}

/**
 * @param {Context} ctx
 * @param {ScheduleStore} store
 * @param {Options} options
 * @param {IO} io
 */
async function list(ctx, store, options, io) {
  const now = Date.now();
  const records = await store.list();
  const views = await Promise.all(records.map(async (record) => ({
    ...describeSchedule(record, now, ctx.config.scheduler.toleranceMs),
    lastFire: (await store.fires(record.schedule.id, 1))[0] ?? null
  })));
  if (options.json) {
    io.stdout.write(JSON.stringify(views) + '\n');
    return 0;
  }
  if (views.length === 0) {
    io.stdout.write('no schedules (pushctl schedule add ID --cron EXPR | --at TIME ...)\n');
    return 0;
  }
  const rows = [['ID', 'STATE', 'WHEN', 'NEXT FIRE', 'LAST FIRE']];
  for (const [i, view] of views.entries()) {
    const s = records[i].schedule;
    rows.push([
      view.id, view.state, when(s),
      view.nextFireAt === null ? '-' : formatZoned(view.nextFireAt, s.timeZone) + (view.overdue ? ' OVERDUE: is a scheduler running?' : ''),
      view.lastFire ? `${view.lastFire.state} ${iso(view.lastFire.at)}` : '-'
    ]);
  }
  io.stdout.write(formatTable(rows));
  return 0;
}

/**
 * @param {Context} ctx
 * @param {ScheduleStore} store
 * @param {string} id
 * @param {Options} options
 * @param {IO} io
 */
async function show(ctx, store, id, options, io) {
  const now = Date.now();
  const record = await store.require(id);
  const view = describeSchedule(record, now, ctx.config.scheduler.toleranceMs);
  const fires = await store.fires(id, 10);
  const s = record.schedule;
  if (options.json) {
    io.stdout.write(JSON.stringify({ ...view, send: s.send, message: s.message, messageSource: s.messageSource, createdAt: s.createdAt, fires }) + '\n');
    return 0;
  }
  const audience = s.send.query ? `--query ${s.send.query}` : `--audience ${s.send.audience}`;
  // camelCase keys are pushctl's own spellings of the same flags (localTime for --local-time).
  const flags = Object.entries(s.send).filter(([key]) => !['audience', 'query', 'message', 'name'].includes(key) && !/[A-Z]/.test(key))
    .map(([key, value]) => value === true ? `--${key}` : `--${key} ${value}`).join(' ');
  const lines = [
    `schedule ${s.id}: ${view.state}`,
    `  when:     ${when(s)}`,
    `  missed:   ${policy(s)}`,
    `  next:     ${view.nextFireAt === null ? '-' : `${formatZoned(view.nextFireAt, s.timeZone)} = ${iso(view.nextFireAt)} as ${view.nextCampaignId}`}` +
      (view.overdue ? '  OVERDUE: is a scheduler process running?' : ''),
    `  name:     ${s.send.name}`,
    `  audience: ${audience}`,
    `  message:  "${s.message.title}" (from ${s.messageSource}, as it was when added)`,
    ...(flags ? [`  options:  ${flags}`] : []),
    fires.length ? '  recent fires:' : '  no fires yet',
    ...fires.map((f) => `    ${iso(f.at)}  ${f.state.padEnd(8)}  ${f.campaignId ?? ''}${f.reason ? `  ${f.reason}` : ''}` +
      (f.state === 'claimed' && f.error ? `  (retrying after: ${f.error})` : ''))
  ];
  io.stdout.write(lines.join('\n') + '\n');
  return 0;
}

/** @param {Schedule} s */
function when(s) {
  return s.cron ? `cron "${s.cron}" in ${s.timeZone}` : `once at ${formatZoned(/** @type {number} */ (s.at), s.timeZone)}`;
}

/** @param {Schedule} s */
function policy(s) {
  return s.missed === 'skip' ? 'skip' : `catch-up within ${s.graceMs / 60_000} min`;
}

/** @param {string | boolean | undefined} value */
function text(value) {
  return typeof value === 'string' ? value : undefined;
}

/** @param {number} ms */
function iso(ms) {
  return new Date(ms).toISOString();
}
