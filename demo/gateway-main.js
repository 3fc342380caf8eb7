#!/usr/bin/env node
// A demo gateway as its own process, as a real gateway would be:
//   node demo/gateway-main.js '{"processes":8,"serviceMs":20,"downstreamMs":30,"timeoutMs":5000}'
//   node demo/gateway-main.js '{"kind":"real","cpuMs":23,"databaseUrl":"postgres://..."}'
// The first is the modelled gateway (gateway.js), the second the real one (real-gateway.js),
// whose CPU is then this process's own. Prints one JSON line with its URL once it listens;
// SIGTERM or SIGINT stops it.
import { createDemoGateway } from './gateway.js';
import { createRealGateway } from './real-gateway.js';

const { kind = 'modelled', ...options } = JSON.parse(process.argv[2] ?? '{}');
const gateway = kind === 'real' ? createRealGateway(options) : createDemoGateway(options);
const url = await gateway.listen(Number(process.argv[3] ?? 0));
process.stdout.write(`${JSON.stringify({ url })}\n`);

const stop = async () => {
  await gateway.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
