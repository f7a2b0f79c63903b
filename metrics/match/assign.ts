/**
 * The assignment step of `auto` alignment: a maximum-weight matching of gold items to predicted
 * items, by the Hungarian (Kuhn-Munkres) algorithm of the `munkres` package (O(n^2 m), any
 * rectangular matrix).
 *
 * Untrusted answers can hold huge arrays: an array side longer than MAX_ASSIGN_SIDE items (after
 * equal items are paired) is not assigned; the scorer pairs it by position instead and says so
 * (`fallback: "matrix_cap"`). A per-record budget of pair evaluations bounds nested arrays too.
 */
import { munkres } from 'munkres';

export const MAX_ASSIGN_SIDE = 300;

/** Row/column pairs. */
export type Assignment = [number, number][];

/** The assignment maximising the total weight (weights in [0, 1]); every row or every column is paired. */
export function assign(weights: number[][]): Assignment {
  if (weights.length === 0 || weights[0].length === 0) return [];
  const cost = weights.map((row) => row.map((w) => 1 - w));
  return munkres(cost) as Assignment;
}
