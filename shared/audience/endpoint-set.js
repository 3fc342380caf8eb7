// De-duplication of endpoint ARNs in flat memory. A Set of tens of millions of
// 90-character strings would need several gigabytes of heap; here each ARN is kept
// only as a 64-bit hash in one typed array, 8 bytes per slot at 25-50% load.
//
// Two ARNs are taken as the same when both 32-bit hashes agree. Treating the pair as
// one uniform 64-bit hash, the chance that any two of n distinct ARNs collide (and
// one device is wrongly reported as a duplicate) is about n² / 2⁶⁵:
// 1 in 37 million for 1,000,000 ARNs, 1 in 15,000 for 50,000,000.

const EMPTY = 0;
const MIN_CAPACITY = 1 << 10;
// Node 20 caps a typed array at 2³² elements; 2³⁰ slots of two words (8 GB, room for
// 500 million ARNs) stays under it and beyond any audience.
const MAX_CAPACITY = 2 ** 30;

/**
 * A set of endpoint ARNs for de-duplicating an audience.
 * @typedef {object} EndpointSet
 * @property {(endpointArn: string) => boolean} add adds the ARN; true if it was not there before
 * @property {(endpointArn: string) => boolean} has
 * @property {number} size distinct ARNs added
 * @property {number} bytes memory held by the table
 */

/**
 * Creates an empty set. The table starts small and doubles whenever it is half full.
 * @param {{ expected?: number }} [options] an expected count sizes the table up front
 * @returns {EndpointSet}
 */
export function createEndpointSet({ expected = 0 } = {}) {
  let capacity = MIN_CAPACITY;
  while (capacity < expected * 2 && capacity < MAX_CAPACITY) capacity *= 2;
  // Slot i is words 2i (first hash) and 2i+1 (second hash); 0,0 marks an empty slot.
  let table = new Uint32Array(capacity * 2);
  let mask = capacity - 1;
  let size = 0;

  /**
   * Finds the slot for a hash pair: the matching slot, or the empty one where it belongs.
   * Linear probing: at most half full, an unsuccessful search takes 2.5 probes on average.
   * @param {Uint32Array} words
   * @param {number} slotMask
   * @param {number} h1
   * @param {number} h2
   */
  function find(words, slotMask, h1, h2) {
    let slot = h1 & slotMask;
    for (;;) {
      const a = words[slot * 2];
      const b = words[slot * 2 + 1];
      if ((a === EMPTY && b === EMPTY) || (a === h1 && b === h2)) return slot;
      slot = (slot + 1) & slotMask;
    }
  }

  function grow() {
    if (capacity >= MAX_CAPACITY) throw new RangeError(`endpoint set is full at ${size} ARNs`);
    const old = table;
    capacity *= 2;
    mask = capacity - 1;
    table = new Uint32Array(capacity * 2);
    for (let i = 0; i < old.length; i += 2) {
      const h1 = /** @type {number} */ (old[i]);
      const h2 = /** @type {number} */ (old[i + 1]);
      if (h1 === EMPTY && h2 === EMPTY) continue;
      const slot = find(table, mask, h1, h2);
      table[slot * 2] = h1;
      table[slot * 2 + 1] = h2;
    }
  }

  return {
    add(endpointArn) {
      const h1 = hashPair(endpointArn);
      let h2 = secondHash;
      // A 0,0 pair would read as an empty slot; 0,1 stands in for it.
      if (h1 === EMPTY && h2 === EMPTY) h2 = 1;
      const slot = find(table, mask, h1, h2);
      // find returns either the matching slot or an empty one.
      if (table[slot * 2] !== EMPTY || table[slot * 2 + 1] !== EMPTY) return false;
      table[slot * 2] = h1;
      table[slot * 2 + 1] = h2;
      size += 1;
      if (size * 2 > capacity) grow();
      return true;
    },
    has(endpointArn) {
      const h1 = hashPair(endpointArn);
      let h2 = secondHash;
      if (h1 === EMPTY && h2 === EMPTY) h2 = 1;
      const slot = find(table, mask, h1, h2);
      return table[slot * 2] === h1 && table[slot * 2 + 1] === h2;
    },
    get size() {
      return size;
    },
    get bytes() {
      return table.byteLength;
    }
  };
}

// hashPair's second hash, handed back through a variable instead of an array so
// that hashing a million ARNs allocates nothing.
let secondHash = 0;

/**
 * Two independent 32-bit hashes of a string in one pass over its UTF-16 code units:
 * MurmurHash3 (x86, 32-bit; two code units per block) and FNV-1a (one code unit per
 * step, with a different offset basis), each finished with murmur's avalanche. Two
 * different algorithms, not one with two seeds, so that inputs colliding in one are
 * unrelated in the other. Returns the first; the second is left in secondHash.
 * @param {string} text
 * @returns {number} unsigned 32-bit
 */
function hashPair(text) {
  let h1 = 0x9747b28c;
  let h2 = 0x811c9dc5 ^ 0x5bd1e995;
  const length = text.length;
  let i = 0;
  for (; i + 1 < length; i += 2) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    let k = Math.imul(c0 | (c1 << 16), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h1 ^= Math.imul(k, 0x1b873593);
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
    h2 = Math.imul(h2 ^ c0, 0x01000193);
    h2 = Math.imul(h2 ^ c1, 0x01000193);
  }
  if (i < length) {
    const c0 = text.charCodeAt(i);
    let k = Math.imul(c0, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h1 ^= Math.imul(k, 0x1b873593);
    h2 = Math.imul(h2 ^ c0, 0x01000193);
  }
  secondHash = fmix32(h2 ^ length);
  return fmix32(h1 ^ (length * 2));
}

/**
 * Murmur3's finaliser: every input bit affects every output bit.
 * @param {number} h
 */
function fmix32(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
