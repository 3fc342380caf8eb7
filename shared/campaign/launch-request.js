// What a launch is asked for, from pushctl send's options: `pushctl send` passes its
// flags, `schedule add` the flags it stores, the scheduler a schedule's stored flags at
// each fire. Every text option is parsed and checked here, once, with messages naming
// the flag; what comes out is data the launch uses as it is.
import { basename } from 'node:path';
import { InputError } from '../errors.js';
import { chooseAudience } from '../audience/open-source.js';
import { readMessageFile } from '../sns/message.js';
import { parseCampaignTiming } from './campaign-timing.js';

/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('./campaign-timing.js').CampaignTiming} CampaignTiming */
/** @typedef {import('../audience/open-source.js').AudienceChoice} AudienceChoice */

/** A message kind: a short name, as it appears in logs, reports and `pushctl model show`. */
const KIND = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

/**
 * pushctl send's options as text (as parsed by pushctl, or as a schedule stores them).
 * @typedef {object} LaunchOptions
 * @property {string} [audience]
 * @property {string} [query]
 * @property {string} [message]  the message file
 * @property {string} [name]
 * @property {string} [kind]  the message kind, for the governor's memory
 * @property {string} [rate]
 * @property {boolean} [strict]
 * @property {string} [deadline] ISO 8601 time after which nothing is sent
 * @property {string} [ttl] a duration (90m, 2h) after the start (with --local-time: each zone's release) after which nothing is sent
 * @property {string} [localTime] HH:MM[:SS]: each device gets it at this time in its own time zone
 * @property {string} [defaultTimezone] the zone of devices without one (default DEFAULT_TIMEZONE)
 */

/**
 * A launch, parsed and checked.
 * @typedef {object} LaunchRequest
 * @property {AudienceChoice} audience
 * @property {Message} message
 * @property {string} name
 * @property {string | null} kind     the message kind (--kind): the governor's memory keeps each kind's wake-up response apart
 * @property {number | null} maxRate  this campaign's own cap (--rate), or null
 * @property {boolean} strict         refuse the campaign if any audience line is invalid
 * @property {CampaignTiming} timing
 * @property {number} [startAt]       the instant local times and TTLs count from (ms): a fire's planned time;
 *   without it, the campaign's creation (and the plan's, when it is made)
 * @property {string} [id]            the campaign id to create (the scheduler derives one per fire)
 */

/**
 * Checks and parses send options into a launch request. Reads the message file unless
 * the message is given (a schedule's, parsed when it was added).
 * @param {Record<string, unknown> & LaunchOptions} options
 * @param {object} context
 * @param {string} context.command         names the command in refusals ('send', 'schedule add')
 * @param {number} context.now             ms: deadlines in the past are refused
 * @param {string} context.defaultTimezone DEFAULT_TIMEZONE
 * @param {number} [context.startAt]
 * @param {Message} [context.message]      the message already parsed; --message then only names the campaign
 * @param {string} [context.id]
 * @returns {Promise<LaunchRequest>}
 */
export async function parseLaunchRequest(options, { command, now, defaultTimezone, startAt, message, id }) {
  const audience = chooseAudience(options, command);
  if (!options.message) throw new InputError(`${command} needs --message FILE: the announcement to send`);
  const maxRate = options.rate === undefined ? null : Number(options.rate);
  if (maxRate !== null && !(Number.isFinite(maxRate) && maxRate > 0)) {
    throw new InputError(`--rate must be a positive number of sends per second, got "${options.rate}"`);
  }
  const kind = options.kind === undefined ? null : String(options.kind);
  if (kind !== null && !KIND.test(kind)) {
    throw new InputError(`--kind must be a short name of letters, digits, '.', '_' or '-' (at most 40, starting with a letter or digit), got ${JSON.stringify(kind)}`);
  }
  const timing = parseCampaignTiming(options, { now, defaultTimezone });
  return {
    audience,
    message: message ?? await readMessageFile(options.message),
    name: options.name ?? basename(options.message),
    kind,
    maxRate,
    strict: options.strict === true,
    timing,
    ...(startAt === undefined ? {} : { startAt }),
    ...(id === undefined ? {} : { id })
  };
}
