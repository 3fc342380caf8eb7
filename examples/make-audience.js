#!/usr/bin/env node
// Writes examples/audience.csv: 2,000 devices with mixed platforms, locales and time
// zones, plus 3 invalid lines and 2 duplicates so a dry run shows skipping. The output
// is the same on every run (a seeded generator), so the file can be regenerated and
// diffed. Usage: node examples/make-audience.js [output.csv]
import { writeFileSync } from 'node:fs';
import { mulberry32 } from '../shared/seeded-random.js';

const DEVICES = 2000;
const output = process.argv[2] ?? new URL('./audience.csv', import.meta.url);

const random = mulberry32(0x5eed1e55);
/** @param {readonly [string, number][]} weighted */
function pick(weighted) {
  let r = random();
  for (const [value, weight] of weighted) if ((r -= weight) < 0) return value;
  return weighted[weighted.length - 1][0];
}
function uuid() {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

const PLATFORMS = /** @type {const} */ ([['GCM', 0.55], ['APNS', 0.4], ['APNS_SANDBOX', 0.05]]);
const LOCALES = /** @type {const} */ ([['en', 0.5], ['fi', 0.25], ['de', 0.2], ['', 0.05]]);
const TIMEZONES = {
  en: ['America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Europe/London'],
  fi: ['Europe/Helsinki'],
  de: ['Europe/Berlin', 'Europe/Vienna', 'Europe/Zurich'],
  '': ['', 'UTC']
};

/** @type {string[][]} */
const rows = [];
let user = 1000;
for (let i = 0; i < DEVICES; i++) {
  // About one user in five has a second device (a phone and a tablet).
  if (random() > 0.2) user += 1;
  const platform = pick(PLATFORMS);
  const locale = pick(LOCALES);
  const zones = TIMEZONES[/** @type {keyof typeof TIMEZONES} */ (locale)];
  const timezone = zones[Math.floor(random() * zones.length)];
  const arn = `arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/pushpace-example/${uuid()}`;
  rows.push([random() < 0.03 ? '' : `user-${user}`, arn, platform, locale, timezone]);
}

// Inserted at fixed data positions (0-based, counted before insertion); the script
// prints the line numbers they end up on.
const extras = [
  { at: 100, row: ['user-9001', '', 'GCM', 'en', 'Europe/London'], why: 'endpointArn is missing' },
  { at: 700, row: rows[42], why: 'duplicate of an earlier line' },
  { at: 1000, row: ['user-9002', 'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/pushpace-example/0b1d2c3e-0000-4000-a000-000000000001', 'WNS', 'de', 'Europe/Berlin'], why: 'platform "WNS"' },
  { at: 1500, row: ['user-9003', 'arn:aws:sns:us-east-1:123456789012:endpoint/APNS/pushpace-example/0b1d2c3e-0000-4000-a000-000000000002', 'APNS'], why: 'wrong number of fields' },
  { at: 1800, row: rows[1234], why: 'duplicate of an earlier line' }
];
for (const extra of [...extras].reverse()) rows.splice(extra.at, 0, /** @type {string[]} */ (extra.row));

const lines = ['userId,endpointArn,platform,locale,timezone', ...rows.map((row) => row.join(','))];
writeFileSync(output, `${lines.join('\n')}\n`);
// Each extra is shifted down by the extras inserted before it; +2 for the header and 1-based lines.
extras.forEach((extra, k) => process.stderr.write(`line ${extra.at + k + 2}: ${extra.why}\n`));
