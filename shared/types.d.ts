// Shapes shared across producers, workers and the emulator. Imported from JS with
//   /** @typedef {import('./types.js').Device} Device */

/** Platforms SNS mobile push supports here. */
export type Platform = 'APNS' | 'APNS_SANDBOX' | 'GCM';

/** One target device: a platform endpoint in SNS. */
export interface Device {
  endpointArn: string;
  platform: Platform;
  userId?: string;
  locale?: string;
  timezone?: string;
}

/** A line or row of an audience that was rejected, with where and why. */
export interface SkippedLine {
  /** 1-based line number in a file, or row number of a query result. */
  line: number;
  reason: string;
}

/**
 * What an audience source yields, one item per line or row, in order. The file and
 * query sources yield only `device` and `skipped`; readAudience (audience-reader.js)
 * also turns devices into `duplicate` and `disabled` items.
 */
export type AudienceItem =
  | { device: Device; line: number }
  | { skipped: SkippedLine }
  /** The endpoint already appeared earlier in the audience: it is sent to once, at its first line. */
  | { duplicate: { line: number; endpointArn: string } }
  /** SNS has disabled the endpoint (a dead token): publishing would fail with EndpointDisabled, so it is left out. */
  | { disabled: { line: number; endpointArn: string } };

/** A validated message as stored with a campaign. Top-level title/body are the default locale. */
export interface Message {
  title: string;
  body: string;
  /** Per-locale variants, keyed by BCP 47 tag ('fi', 'pt-BR'); lookup falls back tag -> language -> default. */
  locales?: Record<string, { title?: string; body?: string }>;
  /** Custom key/value data delivered with the push (strings only on FCM). */
  data?: Record<string, string>;
  deepLink?: string;
  ttlSeconds?: number;
  sound?: string;
  badge?: number;
}

/** `expired`: finished with devices its deadline cut off (counted in `expired`); `completed`: every device reached. */
export type CampaignState = 'running' | 'paused' | 'cancelled' | 'completed' | 'expired' | 'failed';

/** A campaign as stored in Redis (campaign/campaign-store.js), as status, the dashboard and metrics read it. */
export interface Campaign {
  id: string;
  name: string;
  /** The message kind (pushctl send --kind), or null: the governor's memory keeps each kind apart. */
  kind: string | null;
  state: CampaignState;
  message: Message;
  /** Where the audience came from, for people reading status. */
  source: string;
  /** Sends/s cap for this campaign alone. */
  maxRate: number | null;
  /** ms since the epoch. */
  createdAt: number;
  finishedAt: number | null;
  /** Every segment is on the queue. */
  enqueued: boolean;
  /** Devices enqueued. */
  total: number;
  segmentsTotal: number;
  segmentsDone: number;
  delivered: number;
  disabled: number;
  failed: number;
  /** Devices dropped unsent by a cancel. */
  cancelled: number;
  /** Devices not sent because their deadline passed first. */
  expired: number;
  /** Audience lines rejected as invalid. */
  skipped: number;
  /** Audience lines naming an endpoint already listed. */
  duplicates: number;
  /** Endpoints left out because they were already disabled. */
  excluded: number;
  error: string | null;
  /** The instant local times and TTLs count from (ms). */
  startAt: number;
  /** The campaign-wide deadline (ms): absolute, or start + TTL without local time. */
  deadlineAt: number | null;
  /** Time to live from each group's start, as asked for. */
  ttlMs: number | null;
  /** 'HH:MM[:SS]' in each device's zone; null when sent at once. */
  localTime: string | null;
  /** The zone of devices that name none (local-time campaigns). */
  defaultTimezone: string | null;
  /** Bits per device in the outcome bitfield (2 for campaigns created before expiry existed). */
  outcomeBits: 2 | 3;
}

/**
 * One metrics window of the API gateway, as the governor hands it to the pacing
 * controller (shared/pacing/controller.js reads this shape).
 */
export interface GatewaySample {
  p95Ms: number;
  p99Ms: number;
  /** Failed / all requests in the window, 0..1. */
  errorRatio: number;
  /**
   * Requests per second over the window, all traffic; null from a source that sees latency
   * only (an active probe, a Prometheus query without a rate): the controller then reads the
   * load off the latency curve it holds.
   */
  rps: number | null;
}

/** One unit of queued work: up to SEGMENT_SIZE devices of one campaign. */
export interface Segment {
  campaignId: string;
  /** 0-based segment number within the campaign. */
  index: number;
  /** Campaign-wide sequence number of devices[0]; device i has sequence firstSeq + i. */
  firstSeq: number;
  devices: Device[];
  /** ms since the epoch: no worker starts the segment before then (local-time delivery); absent = at once. */
  releaseAt?: number;
  /** ms since the epoch: nothing of the segment is sent at or after it; its unsent devices are then expired. */
  deadlineAt?: number;
}

/** `expired`: not sent because the campaign's deadline passed first; `cancelled`: dropped unsent by a cancel (or a failed enqueue). */
export type Outcome = 'delivered' | 'disabled' | 'failed' | 'expired' | 'cancelled';

/** The result of publishing to one device, recorded once per campaign and device. */
export interface SendOutcome {
  seq: number;
  endpointArn: string;
  outcome: Outcome;
  messageId?: string;
  reason?: string;
  /** Kept with a device that was not delivered, for pushctl failures (an audience to resend to). */
  platform?: Platform;
  userId?: string;
}

/** What a queue handler returns: nothing to ack, or a deferral that puts the item back without counting an attempt. */
export type HandlerResult = void | { deferMs: number };

export interface ConsumeOptions {
  concurrency: number;
  /** Called once when an item has failed its last attempt and was dead-lettered. */
  onDeadLetter?: (payload: any, error: Error) => Promise<void> | void;
}

/** The transport-neutral queue interface: BullMQ (queue/bullmq-queue.js) or RabbitMQ (queue/rabbitmq-queue.js) behind it. */
export interface QueueAdapter<T = any> {
  /** Adds items durably; resolves when all are stored. An item whose release time (the adapter's releaseAtOf) is in the future is not handed to a consumer before it. */
  enqueue(items: T[]): Promise<void>;
  /** Starts consuming. The handler's resolve acks; a throw retries with backoff, or dead-letters after the last attempt or a permanent error. */
  consume(handler: (payload: T, attempt: number) => Promise<HandlerResult>, options: ConsumeOptions): Promise<void>;
  /** Stops taking new items and waits for handlers in progress. */
  stopConsuming(): Promise<void>;
  /** Items waiting, delayed and active, and dead-lettered. */
  counts(): Promise<{ waiting: number; active: number; delayed: number; dead: number }>;
  close(): Promise<void>;
}
