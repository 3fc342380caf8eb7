// A small dense simplex for the oracle: maximise cᵀx subject to Ax ≤ b, x ≥ 0, with b ≥ 0
// (so x = 0 is a feasible start and no phase one is needed). The oracle's programs have a
// few hundred variables and rows; a dense tableau with Dantzig's pivot rule solves them in
// well under a second. Bland's rule takes over after a run of degenerate pivots, which rules
// out cycling, and keeps the rest of the solve: handed back to Dantzig's rule at the first
// non-degenerate pivot, a drawn world's program went 100,000 pivots without converging, and
// such worlds were left out of every evaluation (three held-out worlds, one or two per tuning seed).
//
// Bland's rule rules out cycling only in exact arithmetic. When a jump in the baseline takes
// all the room for a long stretch, most rows have a zero bound, and the solve starts with
// hundreds of degenerate pivots. Bland's rule picks the leaving row by its index, not by the
// size of its pivot, and in held-out baseline-jump world 11 those pivots grew the tableau's
// entries to 1e22. Rounding then chose the signs, and the solve cycled until the limit. So a
// row with a zero bound and no negative coefficient is taken out first, with every variable
// in it: x ≥ 0 holds each of them at zero, so the optimum does not change, and the
// degenerate pivots never happen. The oracle's rows are loads, never negative, so every zero
// bound goes. After that, none of 1,400 solves on tuning and held-out worlds needed Bland's
// rule, and none took more than 1,000 pivots.

/**
 * The solver failed (it did not converge, or the program is unbounded): not an answer about
 * the program, so a caller must not read it as "nothing fits" (the oracles' RangeError).
 */
export class SolverError extends Error {
  name = 'SolverError';
}

/**
 * @param {object} program
 * @param {Float64Array[]} program.rows  A, one Float64Array of length n per constraint
 * @param {ArrayLike<number>} program.bounds  b, all ≥ 0
 * @param {ArrayLike<number>} program.objective  c, length n
 * @param {{ maxPivots?: number }} [options]
 * @returns {{ x: Float64Array, value: number, pivots: number }}
 */
export function maximise({ rows, bounds, objective }, { maxPivots = 100_000 } = {}) {
  const n = objective.length;
  // A row with a zero bound and no negative coefficient holds every variable in it at zero.
  // Take those variables and rows out before the simplex sees them: they are where the
  // degenerate pivots come from.
  const fixed = new Uint8Array(n);
  const zeroRow = rows.map((row, r) => {
    if (!(bounds[r] >= 0)) throw new RangeError(`bound ${r} must be ≥ 0, got ${bounds[r]}`);
    if (bounds[r] !== 0) return false;
    for (let j = 0; j < n; j++) if (row[j] < 0) return false;
    for (let j = 0; j < n; j++) if (row[j] > 0) fixed[j] = 1;
    return true;
  });
  /** @type {number[]} */
  const free = [];
  for (let j = 0; j < n; j++) if (!fixed[j]) free.push(j);
  /** @type {Float64Array[]} */
  const keptRows = [];
  /** @type {number[]} */
  const keptBounds = [];
  rows.forEach((row, r) => {
    if (zeroRow[r]) return;
    keptRows.push(Float64Array.from(free, (j) => row[j]));
    keptBounds.push(bounds[r]);
  });
  const solved = simplex(keptRows, keptBounds, Float64Array.from(free, (j) => objective[j]), maxPivots);
  const x = new Float64Array(n);
  free.forEach((j, k) => { x[j] = solved.x[k]; });
  let value = 0;
  for (let j = 0; j < n; j++) value += objective[j] * x[j];
  return { x, value, pivots: solved.pivots };
}

/**
 * The simplex itself, on a program with b ≥ 0.
 * @param {Float64Array[]} rows
 * @param {ArrayLike<number>} bounds
 * @param {ArrayLike<number>} objective
 * @param {number} maxPivots
 * @returns {{ x: Float64Array, pivots: number }}
 */
function simplex(rows, bounds, objective, maxPivots) {
  const m = rows.length;
  const n = objective.length;
  const width = n + m + 1; // variables, slacks, right-hand side
  const rhs = n + m;
  const tableau = new Float64Array((m + 1) * width);
  const basis = new Int32Array(m);
  for (let r = 0; r < m; r++) {
    const row = rows[r];
    const base = r * width;
    for (let j = 0; j < n; j++) tableau[base + j] = row[j];
    tableau[base + n + r] = 1;
    tableau[base + rhs] = bounds[r];
    basis[r] = n + r;
  }
  const obj = m * width;
  for (let j = 0; j < n; j++) tableau[obj + j] = -objective[j];

  const eps = 1e-9;
  let pivots = 0;
  let degenerate = 0;
  let bland = false;
  const nonzero = new Int32Array(width);
  for (;;) {
    // Entering column: most negative reduced cost (Dantzig), or the first negative (Bland).
    if (degenerate > 50) bland = true;
    let col = -1;
    let best = -eps;
    for (let j = 0; j < rhs; j++) {
      const v = tableau[obj + j];
      if (v < best) { col = j; best = v; if (bland) break; }
    }
    if (col < 0) break;
    // Leaving row: the tightest ratio; ties to the lowest basis index.
    let row = -1;
    let ratio = Infinity;
    for (let r = 0; r < m; r++) {
      const a = tableau[r * width + col];
      if (a > eps) {
        const q = tableau[r * width + rhs] / a;
        if (q < ratio - 1e-12 || (q <= ratio + 1e-12 && row >= 0 && basis[r] < basis[row])) { ratio = q; row = r; }
      }
    }
    if (row < 0) throw new SolverError('linear program is unbounded');
    if (++pivots > maxPivots) throw new SolverError(`linear program did not converge in ${maxPivots} pivots`);
    degenerate = ratio < 1e-12 ? degenerate + 1 : 0;

    // Pivot, touching only the pivot row's non-zero columns.
    const pBase = row * width;
    const inv = 1 / tableau[pBase + col];
    let count = 0;
    for (let j = 0; j < width; j++) {
      if (tableau[pBase + j] !== 0) {
        tableau[pBase + j] *= inv;
        nonzero[count++] = j;
      }
    }
    for (let r = 0; r <= m; r++) {
      if (r === row) continue;
      const base = r * width;
      const f = tableau[base + col];
      if (f === 0) continue;
      for (let k = 0; k < count; k++) {
        const j = nonzero[k];
        tableau[base + j] -= f * tableau[pBase + j];
      }
      tableau[base + col] = 0;
    }
    basis[row] = col;
  }

  const x = new Float64Array(n);
  for (let r = 0; r < m; r++) if (basis[r] < n) x[basis[r]] = Math.max(0, tableau[r * width + rhs]);
  return { x, pivots };
}
