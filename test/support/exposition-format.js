// A strict check of the Prometheus text exposition format (0.0.4) for tests: the sample
// grammar comes from shared/gateway-metrics/exposition.js (which fails on any line it
// cannot read); this adds the rules about families a Prometheus server enforces or relies
// on: HELP/TYPE syntax, one TYPE per family before its samples, samples grouped by family
// and named for its type, no duplicate series, valid names, and complete, cumulative
// histograms whose _count matches the +Inf bucket.
// https://prometheus.io/docs/instrumenting/exposition_formats/#text-format-details
import { parseExposition, parseValue } from '../../shared/gateway-metrics/exposition.js';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** @typedef {{ name: string, type: string, help: string | null, samples: import('../../shared/gateway-metrics/exposition.js').ExpositionSample[] }} Family */

/**
 * Validates a scrape; throws an Error naming the line and the rule it breaks.
 * @param {string} text
 * @returns {Map<string, Family>} families by name
 */
export function validateExposition(text) {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  /** @type {Map<string, Family>} */
  const families = new Map();
  /** @type {Set<string>} */
  const closed = new Set();
  /** @type {Family | null} */
  let current = null;
  const series = new Set();
  const lines = text.split('\n');

  /** @param {string} name */
  const open = (name) => {
    if (current?.name === name) return current;
    if (current) closed.add(current.name);
    if (closed.has(name)) throw new Error(`family ${name} appears in two places: its lines must be together`);
    let family = families.get(name);
    if (!family) families.set(name, (family = { name, type: 'untyped', help: null, samples: [] }));
    current = family;
    return family;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const where = `line ${i + 1}`;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) {
        if (/^#\s*(HELP|TYPE)\b/.test(line)) throw new Error(`${where}: malformed ${line.slice(0, 60)}`);
        continue; // a plain comment
      }
      const [, keyword, name, rest = ''] = meta;
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: invalid metric name ${name}`);
      const family = open(name);
      if (keyword === 'HELP') {
        if (family.help !== null) throw new Error(`${where}: second HELP for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`${where}: HELP of ${name} has an invalid escape`);
        family.help = rest;
      } else {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type "${rest}" for ${name}`);
        if (family.type !== 'untyped' || family.samples.length > 0) throw new Error(`${where}: TYPE of ${name} must come once, before its samples`);
        family.type = rest;
      }
      continue;
    }
    const [sample] = parseExposition(line + '\n');
    if (!sample) throw new Error(`${where}: not a sample`);
    for (const label of Object.keys(sample.labels)) {
      if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new Error(`${where}: invalid label name ${label}`);
    }
    const family = open(familyOf(sample.name, current));
    const suffix = sample.name.slice(family.name.length);
    const allowed = { counter: [''], gauge: [''], untyped: [''], histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] }[family.type] ?? [''];
    if (!allowed.includes(suffix)) throw new Error(`${where}: ${sample.name} does not belong to ${family.type} ${family.name}`);
    if (family.type === 'counter' && !(sample.value >= 0)) throw new Error(`${where}: counter ${sample.name} is ${sample.value}`);
    const key = `${sample.name}{${Object.entries(sample.labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (series.has(key)) throw new Error(`${where}: duplicate series ${key}`);
    series.add(key);
    family.samples.push(sample);
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/**
 * The family a sample belongs to: the current one if the name extends it, else the name itself.
 * @param {string} sampleName
 * @param {Family | null} current
 */
function familyOf(sampleName, current) {
  if (current && (sampleName === current.name || (['histogram', 'summary'].includes(current.type) && /^_(bucket|sum|count)$/.test(sampleName.slice(current.name.length)) && sampleName.startsWith(current.name)))) {
    return current.name;
  }
  return sampleName;
}

/** @param {Family} family */
function checkHistogram(family) {
  /** @type {Map<string, { buckets: [number, number][], count?: number, sum?: number }>} */
  const byLabels = new Map();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let h = byLabels.get(key);
    if (!h) byLabels.set(key, (h = { buckets: [] }));
    if (s.name.endsWith('_bucket')) {
      const bound = le === undefined ? undefined : parseValue(le);
      if (bound === undefined || Number.isNaN(bound)) throw new Error(`${family.name}: bucket without a numeric le`);
      h.buckets.push([bound, s.value]);
    } else if (s.name.endsWith('_count')) {
      h.count = s.value;
    } else {
      h.sum = s.value;
    }
  }
  for (const [labels, h] of byLabels) {
    const where = `${family.name}${labels}`;
    const inf = h.buckets.find(([bound]) => bound === Infinity);
    if (!inf) throw new Error(`${where}: no le="+Inf" bucket`);
    if (h.count === undefined || h.sum === undefined) throw new Error(`${where}: _count or _sum missing`);
    if (h.count !== inf[1]) throw new Error(`${where}: _count ${h.count} differs from the +Inf bucket ${inf[1]}`);
    const sorted = [...h.buckets].sort(([a], [b]) => a - b);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i][0] === sorted[i - 1][0]) throw new Error(`${where}: bucket le=${sorted[i][0]} twice`);
      if (sorted[i][1] < sorted[i - 1][1]) throw new Error(`${where}: buckets are not cumulative at le=${sorted[i][0]}`);
    }
  }
}

/**
 * The value of one series, or undefined.
 * @param {Map<string, Family>} families
 * @param {string} name  a sample name
 * @param {Record<string, string>} [labels] labels it must have (others are ignored)
 */
export function sampleValue(families, name, labels = {}) {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
