// A governor process for the lease takeover test: real Redis and lease, a fake
// controller that always answers `rate`. Usage:
//   node test/support/governor-fixture.js PREFIX TTL_MS TICK_MS RATE
// Logs pino JSON on stdout; SIGTERM stops it cleanly (releasing the lease).
import { createRedis } from '../../shared/redis.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import { createGovernor } from '../../shared/governor/governor.js';
import { createLogger } from '../../shared/logger.js';
import { REDIS_URL } from './harness.js';

const [prefix, ttlMs, tickMs, rate] = process.argv.slice(2);
const redis = createRedis(REDIS_URL, { name: 'pushpace:governor-fixture' });
const governor = createGovernor({
  redis,
  keyPrefix: prefix,
  bucket: createTokenBucket(redis, { keyPrefix: prefix, sendRate: 100, sendBurst: 5 }),
  controller: { update: () => ({ rate: Number(rate), reason: 'plan' }) },
  readGateway: async () => null,
  logger: createLogger({ logLevel: 'info' }, { process: 'governor-fixture' }),
  tickMs: Number(tickMs),
  leaseTtlMs: Number(ttlMs)
});
governor.start();
process.on('SIGTERM', async () => {
  await governor.stop();
  await redis.quit();
  process.exit(0);
});
