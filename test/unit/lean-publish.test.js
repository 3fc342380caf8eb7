// The lean publish path's pure parts: the Query body, reading SNS's answer, and the
// credential cache's refresh rule, in virtual time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { publishBody, readPublishAnswer } from '../../shared/sns/publish-query.js';
import { refreshingCredentials } from '../../shared/sns/lean-publisher.js';
import { classifyAnswer } from '../../shared/sns/sns-client.js';

test('the body is form-encoded as RFC 3986 (!\'()* escaped too), attributes numbered from 1', () => {
  const body = publishBody({ targetArn: 'arn:x', message: "{\"default\":\"It's (50%) off!*\"}",
    attributes: { 'AWS.SNS.MOBILE.APNS.TTL': { DataType: 'String', StringValue: '60' } } });
  assert.equal(body, 'Action=Publish&Version=2010-03-31&Message=%7B%22default%22%3A%22It%27s%20%2850%25%29%20off%21%2A%22%7D' +
    '&TargetArn=arn%3Ax&MessageStructure=json&MessageAttributes.entry.1.Name=AWS.SNS.MOBILE.APNS.TTL' +
    '&MessageAttributes.entry.1.Value.DataType=String&MessageAttributes.entry.1.Value.StringValue=60');
  assert.doesNotMatch(publishBody({ targetArn: 'a', message: 'm' }), /MessageAttributes/);
});

test('answers: the message id, an error\'s code, message (entities decoded) and type, and a non-SNS page by status', () => {
  assert.deepEqual(readPublishAnswer(200, '<PublishResponse><PublishResult><MessageId>m-1</MessageId></PublishResult></PublishResponse>'),
    { status: 200, messageId: 'm-1' });
  const error = readPublishAnswer(400, '<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameter</Code>' +
    '<Message>Invalid &lt;x&gt; &amp; &quot;y&quot; &#39;z&#x27;</Message></Error></ErrorResponse>');
  assert.deepEqual(error, { status: 400, code: 'InvalidParameter', message: 'Invalid <x> & "y" \'z\'', type: 'Sender' });
  assert.deepEqual(classifyAnswer(error), { kind: 'permanent', reason: 'InvalidParameter: Invalid <x> & "y" \'z\'' });
  assert.equal(classifyAnswer(readPublishAnswer(502, '<html>Bad Gateway</html>')).kind, 'transient');
  assert.equal(classifyAnswer(readPublishAnswer(429, '')).kind, 'throttled');
  assert.equal(classifyAnswer(readPublishAnswer(404, 'not found')).kind, 'permanent');
});

test('credentials are cached until less than 5 minutes are left, then fetched again; one fetch is shared', async () => {
  let now = 1_000_000;
  let fetched = 0;
  const provider = async () => {
    fetched++;
    return { accessKeyId: `k${fetched}`, secretAccessKey: 's', expiration: new Date(now + 600_000) };
  };
  const credentials = refreshingCredentials(provider, () => now);
  const first = await Promise.all([credentials(), credentials(), credentials()]);
  assert.deepEqual(first.map((c) => c.accessKeyId), ['k1', 'k1', 'k1']);
  now += 299_000; // 301 s left
  assert.equal((await credentials()).accessKeyId, 'k1');
  now += 2_000; // 299 s left: refreshed
  assert.equal((await credentials()).accessKeyId, 'k2');
  assert.equal(fetched, 2);

  let staticFetched = 0;
  const fixed = refreshingCredentials(async () => { staticFetched++; return { accessKeyId: 'a', secretAccessKey: 'b' }; }, () => now);
  await fixed();
  now += 86_400_000;
  await fixed();
  assert.equal(staticFetched, 1, 'credentials without an expiration are fetched once');
});

test('a failed fetch is not cached: the next publish tries again', async () => {
  let calls = 0;
  const credentials = refreshingCredentials(async () => {
    calls++;
    if (calls === 1) throw new Error('instance metadata service unreachable');
    return { accessKeyId: 'k', secretAccessKey: 's' };
  });
  await assert.rejects(credentials(), /unreachable/);
  assert.equal((await credentials()).accessKeyId, 'k');
});
