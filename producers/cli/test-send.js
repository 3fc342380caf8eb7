// pushctl send --to ARN: a test send to one device, now. Not a campaign (a campaign needs
// a worker running and answers later): one publish, here, through the sender the ingest
// process uses for transactional sends, so it takes its token from the shared bucket's
// transactional lane (never over the rate, not queued behind a running campaign) and goes
// out through the same SNS client, publish and retry rules as every send.
import { InputError, PushError } from '../../shared/errors.js';
import { endpointArnPlatform, parseDeviceFields } from '../../shared/audience/device.js';
import { readMessageFile } from '../../shared/sns/message.js';
import { createSnsClient } from '../../shared/sns/sns-client.js';
import { createTransactionalSender } from '../../shared/events/transactional-sender.js';

/** @typedef {import('./context.js').Context} Context */

// A token comes within a second at any sensible rate; this bounds a wait at a rate of
// a few sends a minute, or retries of an SNS that keeps answering 5xx.
const TIMEOUT_MS = 60_000;

/**
 * @param {Context} ctx
 * @param {{ to?: string, message?: string, dryRun?: boolean, json?: boolean }} options
 * @param {{ stdout: NodeJS.WritableStream }} io
 * @returns {Promise<number>} 0 delivered, 1 not (disabled, failed, not sent)
 */
export async function testSend(ctx, options, io) {
  const device = parseTarget(String(options.to));
  if (!options.message) throw new InputError('send needs --message FILE: the announcement to send');
  // Checked as for any campaign: every field, every locale's payload against the 4 KB limit.
  const message = await readMessageFile(options.message);
  /** @param {Record<string, unknown>} answer @param {string} text */
  const print = (answer, text) => io.stdout.write(options.json ? JSON.stringify({ platform: device.platform, ...answer }) + '\n' : `${text}\n`);
  if (options.dryRun) {
    print({ dryRun: true }, `dry run: the message is valid for a ${device.platform} endpoint; nothing was sent`);
    return 0;
  }
  if ((await ctx.bucket.settings()).rate === 0) {
    throw new PushError('sending is stopped (pushctl rate 0): a test send takes a token like every send, so nothing was sent; pushctl rate N resumes sending');
  }

  const sns = await createSnsClient(ctx.config.sns, { maxSockets: 1 });
  const sender = createTransactionalSender({ bucket: ctx.bucket, sns, redis: ctx.redis, config: ctx.config });
  const interrupt = new AbortController();
  const stop = () => interrupt.abort();
  process.once('SIGINT', stop);
  /** @type {{ outcome: string, messageId?: string } | null} */
  let result = null;
  try {
    const report = await sender.send({
      message, devices: [device], signal: AbortSignal.any([interrupt.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      record: async (_, outcome, messageId) => { result = { outcome, messageId }; }
    });
    const answer = /** @type {{ outcome: string, messageId?: string } | null} */ (result);
    if (answer?.outcome === 'delivered') {
      print({ outcome: 'delivered', messageId: answer.messageId }, `delivered to an ${device.platform} endpoint (SNS message id ${answer.messageId})`);
      return 0;
    }
    if (answer?.outcome === 'disabled') {
      print({ outcome: 'disabled' }, 'disabled: SNS says the endpoint is disabled (EndpointDisabled); it is left out of every campaign from now on');
    } else if (answer?.outcome === 'failed') {
      print({ outcome: 'failed', reason: report.failureReasons[0] }, `failed: ${report.failureReasons[0] ?? 'SNS refused it'}`);
    } else {
      const reason = interrupt.signal.aborted ? 'interrupted' : `no answer within ${TIMEOUT_MS / 1000} s (a token at the shared rate, or SNS retries)`;
      print({ outcome: 'not-sent', reason }, `not sent: ${reason}`);
    }
    return 1;
  } finally {
    process.off('SIGINT', stop);
    sns.destroy();
  }
}

/**
 * The device of --to, valid as an audience line would have to be, its platform read off
 * the ARN. The ARN is not quoted back: it identifies a person's phone.
 * @param {string} arn
 */
function parseTarget(arn) {
  const platform = endpointArnPlatform(arn);
  if (platform === null) throw new InputError('--to must be an SNS platform endpoint ARN (arn:aws:sns:<region>:<account>:endpoint/<platform>/<app>/<id>)');
  const parsed = parseDeviceFields({ endpointArn: arn, platform }, 1);
  if ('skipped' in parsed) throw new InputError(`--to: ${parsed.skipped.reason}`);
  return parsed.device;
}
