// The baseline: a bare loop of SNSClient.send(PublishCommand) at a fixed concurrency,
// with the same client settings the worker's sdk path uses. Prints the CPU it spent in
// the loop (process.cpuUsage, module loading left out) as JSON on stdout.
// Usage: node bench/bare-publish-loop.js URL COUNT CONCURRENCY
import { PublishCommand } from '@aws-sdk/client-sns';
import { createSdkClient } from '../shared/sns/sns-client.js';

const [url, count, concurrency] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const client = createSdkClient({ region: 'us-east-1', endpoint: url },
  { maxSockets: concurrency, credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }) });
const message = JSON.stringify({ default: 'Hello', GCM: JSON.stringify({ notification: { title: 'Hi', body: 'Hello' } }) });
const cpuAtStart = process.cpuUsage();
let next = 0;
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < count) {
    const i = next++;
    await client.send(new PublishCommand({
      TargetArn: `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/bench/${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
      Message: message,
      MessageStructure: 'json'
    }));
  }
}));
const cpu = process.cpuUsage(cpuAtStart);
client.destroy();
process.stdout.write(`${JSON.stringify({ cpuMicros: cpu.user + cpu.system })}\n`);
