// The shape every simulated send strategy has (sim/simulate.js drives them once per second).

/** What a strategy may know at one simulated second. */
export interface StrategyContext {
  /** Seconds since the campaign's start; negative during the warm-up, when nothing may be sent. */
  t: number;
  /** Devices not yet sent to. */
  remaining: number;
  /** Most sends SNS accepts in one second (the account's publish limit). */
  snsMax: number;
  /** The latest gateway metrics window a governor could read now, or null when metrics are unavailable. */
  observe(): import('../../shared/pacing/controller.js').GatewaySample | null;
}

export interface Strategy {
  name: string;
  /** Sends in this second; at most min(remaining, snsMax), and 0 while t < 0. */
  sendsAt(context: StrategyContext): number;
  /** Optional per-decision record for charts (the adaptive controller's estimates). */
  trace?: Array<Record<string, number | string | boolean>>;
  /** The adaptive controller's estimates at the campaign's end, before an idle reset forgets them (wake-up-memory.js). */
  /** The adaptive strategy's controller estimates now (bench/forecast-accuracy.js forecasts from them). */
  snapshot?(): Record<string, any>;
  readonly learned?: { requestsPerSend: number, requestsPerSendSd: number, medianFactor: number, sigmaFactor: number, baseline?: number, startBaselineRps?: number | null, startPrior?: { requestsPerSend: number, requestsPerSendSd: number } | null, capacity?: number } | null;
}
