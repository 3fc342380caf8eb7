// A parser for the Prometheus text exposition format (version 0.0.4, which OpenMetrics text
// also mostly is), and readers for one histogram and one counter out of a scrape. Strict on
// purpose: a line it cannot read fails the whole scrape, because a half-read histogram gives
// quantiles that look plausible and are wrong.
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/

/** @typedef {{ name: string, labels: Record<string, string>, value: number }} ExpositionSample */

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*$/;
const LABEL_PAIR = /[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\]|\\.)*)"[ \t]*(,|$)/y;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Parses exposition text into samples. Throws with the line number on a malformed line.
 * @param {string} text
 * @returns {ExpositionSample[]}
 */
export function parseExposition(text) {
  /** @type {ExpositionSample[]} */
  const samples = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`line ${i + 1} is not a sample: ${JSON.stringify(line.slice(0, 80))}`);
    const labels = match[2] === undefined ? {} : parseLabels(match[2], i + 1);
    const value = parseValue(match[3]);
    if (value === undefined) throw new Error(`line ${i + 1}: ${JSON.stringify(match[3])} is not a number`);
    samples.push({ name: match[1], labels, value });
  }
  return samples;
}

/** @param {string} inner  what is between the braces @param {number} lineNo */
function parseLabels(inner, lineNo) {
  /** @type {Record<string, string>} */
  const labels = {};
  if (inner.trim() === '') return labels;
  LABEL_PAIR.lastIndex = 0;
  while (LABEL_PAIR.lastIndex < inner.length) {
    const pair = LABEL_PAIR.exec(inner);
    if (!pair) throw new Error(`line ${lineNo}: malformed labels {${inner.slice(0, 80)}}`);
    labels[pair[1]] = pair[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    if (pair[3] === '') break;
  }
  return labels;
}

/** @param {string} text @returns {number | undefined} */
export function parseValue(text) {
  if (NUMBER.test(text)) return Number(text);
  switch (text) {
    case '+Inf': case 'Inf': return Infinity;
    case '-Inf': return -Infinity;
    case 'NaN': return NaN;
    default: return undefined;
  }
}

/**
 * @typedef {object} HistogramTotals  one histogram summed across all its label sets but `le`
 * @property {Map<number, number>} buckets  upper bound → cumulative count
 * @property {number} count
 * @property {number} sum
 */

/**
 * Reads the histogram `name` (its `_bucket`, `_sum` and `_count` series), summing over every
 * label but `le`, as `sum(...) by (le)` does. Throws when its buckets are missing or broken.
 * @param {ExpositionSample[]} samples
 * @param {string} name
 * @returns {HistogramTotals}
 */
export function readHistogram(samples, name) {
  /** @type {Map<number, number>} */
  const buckets = new Map();
  let count = 0;
  let sum = 0;
  let hasCount = false;
  for (const s of samples) {
    if (s.name === `${name}_bucket`) {
      const le = s.labels.le === undefined ? undefined : parseValue(s.labels.le);
      if (le === undefined || Number.isNaN(le)) throw new Error(`${name}_bucket has a sample without a numeric le label`);
      buckets.set(le, (buckets.get(le) ?? 0) + s.value);
    } else if (s.name === `${name}_count`) {
      count += s.value;
      hasCount = true;
    } else if (s.name === `${name}_sum`) {
      sum += s.value;
    }
  }
  if (buckets.size === 0) throw new Error(`histogram ${name}: no ${name}_bucket samples`);
  const inf = buckets.get(Infinity);
  if (inf === undefined) throw new Error(`histogram ${name}: no le="+Inf" bucket`);
  return { buckets, count: hasCount ? count : inf, sum };
}

/**
 * Sums the counter `name` over all its label sets, and over those whose labels match every
 * pattern in `match` (anchored regular expressions, like PromQL's `=~`).
 * @param {ExpositionSample[]} samples
 * @param {string} name
 * @param {Record<string, RegExp>} match
 */
export function readCounter(samples, name, match) {
  let total = 0;
  let matching = 0;
  let seen = false;
  for (const s of samples) {
    if (s.name !== name) continue;
    seen = true;
    total += s.value;
    if (Object.entries(match).every(([label, re]) => re.test(s.labels[label] ?? ''))) matching += s.value;
  }
  if (!seen) throw new Error(`counter ${name}: no samples`);
  return { total, matching };
}

/**
 * The q-quantile of a histogram given as cumulative bucket counts, as Prometheus's
 * histogram_quantile computes it: find the bucket the rank falls in and interpolate linearly
 * within it (the lowest bucket starts at 0). A rank in the +Inf bucket answers the highest
 * finite bound. NaN when there are no observations.
 * @param {number} q  0..1
 * @param {Map<number, number>} buckets  upper bound → cumulative count; must hold +Inf
 */
export function histogramQuantile(q, buckets) {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  if (bounds.length < 2 || bounds[bounds.length - 1] !== Infinity) return NaN;
  // Buckets scraped from different label sets at slightly different instants can be a little
  // out of order; Prometheus forces them monotonic too.
  const counts = [];
  let max = 0;
  for (const b of bounds) counts.push((max = Math.max(max, /** @type {number} */ (buckets.get(b)))));
  const observations = counts[counts.length - 1];
  if (!(observations > 0)) return NaN;
  let rank = q * observations;
  const b = counts.findIndex((c) => c >= rank);
  if (b === bounds.length - 1) return bounds[bounds.length - 2];
  if (b === 0 && bounds[0] <= 0) return bounds[0];
  let start = 0;
  let inBucket = counts[b];
  if (b > 0) {
    start = bounds[b - 1];
    inBucket -= counts[b - 1];
    rank -= counts[b - 1];
  }
  return start + (bounds[b] - start) * (rank / inBucket);
}
