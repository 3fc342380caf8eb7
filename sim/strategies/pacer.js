// Turns a rate (sends/s, possibly fractional) into whole sends per simulated second,
// carrying the fraction over so that the long-run count matches the rate.

export function createPacer() {
  let carry = 0;
  return {
    /**
     * Sends for this second at `rate`, never more than `limit`.
     * @param {number} rate
     * @param {number} limit
     */
    take(rate, limit) {
      const want = Math.max(0, rate) + carry;
      const whole = Math.floor(want);
      if (whole >= limit) { carry = 0; return Math.max(0, limit); }
      carry = want - whole;
      return whole;
    }
  };
}
