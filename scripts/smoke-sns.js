#!/usr/bin/env node
// `npm run smoke:sns -- --endpoint-arn ARN`: one real push to one real device, with the
// caller's AWS credentials, before trusting a deployment with a campaign. It checks what
// the emulator cannot: the credentials, the IAM policy (docs/aws-iam/), the region and the
// platform application's APNs/FCM credentials. Never run by npm test or CI.
import { readMessageFile, createRenderer } from '../shared/sns/message.js';
import { createSnsClient } from '../shared/sns/sns-client.js';
import { parseSmokeArgs, SMOKE_USAGE } from '../shared/sns/smoke-args.js';
import { exitCodeFor } from '../shared/errors.js';

try {
  const request = parseSmokeArgs(process.argv.slice(2), process.env);
  if (request === 'help') {
    process.stdout.write(`${SMOKE_USAGE}\n`);
  } else {
    const message = await readMessageFile(request.messageFile);
    const rendered = createRenderer(message)(request.platform, request.locale);
    // emulator: the local emulator checks no signature; fixed credentials keep the SDK off the
    // instance metadata service. Against AWS the SDK's own credential chain is used.
    const sns = await createSnsClient({ region: request.region, endpoint: request.snsEndpoint, emulator: request.snsEndpoint !== undefined }, { maxSockets: 1 });
    const where = request.snsEndpoint ?? `AWS SNS in ${request.region}`;
    try {
      // One attempt, no retry: the answer is what is being tested. The ARN is not printed: it identifies a phone.
      const result = await sns.publish({ targetArn: request.endpointArn, message: rendered.message, attributes: rendered.attributes });
      if (result.kind === 'delivered') {
        process.stdout.write(`delivered: ${where} accepted the push for the ${request.platform} endpoint (message id ${result.messageId})\n`);
      } else {
        process.stdout.write(`not delivered (${result.kind}): ${result.reason}\n`);
        process.exitCode = 1;
      }
    } finally {
      sns.destroy();
    }
  }
} catch (error) {
  process.stderr.write(`smoke:sns: ${/** @type {Error} */ (error).message}\n`);
  process.exitCode = exitCodeFor(error);
}
