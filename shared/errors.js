// One home for error classes. Code matches on `code`, never on message text.
// `retryable` is part of the type: a permanent error is never retried.

export class PushError extends Error {
  /**
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = this.constructor.name;
    /** @type {string} */
    this.code = 'PUSH_ERR';
    /** @type {boolean} */
    this.retryable = false;
  }
}

/** Invalid user input (config, CLI flags, audience, message). Exit code 2. */
export class InputError extends PushError {
  /** @param {string} message @param {{ cause?: unknown }} [options] */
  constructor(message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_INPUT';
  }
}

/** An invalid environment variable. Exit code 2: the operator must fix it. */
export class ConfigError extends InputError {
  /** @param {string} message @param {{ cause?: unknown }} [options] */
  constructor(message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_CONFIG';
  }
}

/** A dependency (Redis, PostgreSQL, the queue) could not be reached. Exit code 1. */
export class UnavailableError extends PushError {
  /** @param {string} message @param {{ cause?: unknown }} [options] */
  constructor(message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_UNAVAILABLE';
    this.retryable = true;
  }
}

/** Something failed that may succeed later: SNS 5xx, network, throttling. Retried with backoff. */
export class TransientError extends PushError {
  /** @param {string} message @param {{ cause?: unknown }} [options] */
  constructor(message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_TRANSIENT';
    this.retryable = true;
  }
}

/** Something that will fail the same way every time. Dead-lettered at once, never retried. */
export class PermanentError extends PushError {
  /** @param {string} message @param {{ cause?: unknown }} [options] */
  constructor(message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_PERMANENT';
  }
}

/** The campaign asked for does not exist. */
export class NotFoundError extends InputError {
  /** @param {string} message @param {{ cause?: unknown }} [options] */
  constructor(message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_NOT_FOUND';
  }
}

/**
 * A campaign with the id asked for exists already: nothing was created or changed. Only
 * callers that choose the id see it (the scheduler derives one per fire): another
 * scheduler launched the fire first.
 */
export class CampaignExistsError extends PushError {
  /** @param {string} campaignId @param {{ cause?: unknown }} [options] */
  constructor(campaignId, options) {
    super(`campaign ${campaignId} already exists; nothing was created`, options);
    this.code = 'PUSH_ERR_CAMPAIGN_EXISTS';
    this.campaignId = campaignId;
  }
}

/**
 * Enqueueing a campaign broke off part-way (Redis lost, Ctrl-C). `marked` says whether
 * the campaign could be marked failed, so that workers drop what was queued.
 */
export class EnqueueError extends PushError {
  /**
   * @param {string} campaignId
   * @param {boolean} marked
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(campaignId, marked, message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_ENQUEUE';
    this.campaignId = campaignId;
    this.marked = marked;
  }
}

/**
 * The process exit code for an error: 2 for bad input, 1 for everything else.
 * @param {unknown} error
 */
export function exitCodeFor(error) {
  return error instanceof InputError ? 2 : 1;
}
