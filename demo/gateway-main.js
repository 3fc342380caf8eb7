#!/usr/bin/env node
// The demo gateway as its own process, as a real gateway would be:
//   node demo/gateway-main.js '{"processes":8,"serviceMs":20,"downstreamMs":30,"timeoutMs":5000}'
// Prints one JSON line with its URL once it listens; SIGTERM or SIGINT stops it.
import { createDemoGateway } from './gateway.js';

const gateway = createDemoGateway(JSON.parse(process.argv[2] ?? '{}'));
const url = await gateway.listen(Number(process.argv[3] ?? 0));
process.stdout.write(`${JSON.stringify({ url })}\n`);

const stop = async () => {
  await gateway.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
