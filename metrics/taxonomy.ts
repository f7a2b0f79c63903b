/**
 * Error taxonomy (paper §6.7) from per-record rows: every record falls in the first class that
 * fits, so the classes add up to the records scored.
 *   parse_failure      the answer is not a JSON object or array
 *   schema_violation   parsed, but fails its schema (or the schema itself is invalid)
 *   coverage_gate      valid, but the path-set F1 (paths missing, or extra ones) is under the
 *                      coverage gate, which took Value Accuracy down (text: to 0): the record is
 *                      filed under the gate that fired, not under what made it fire
 *   missing_paths      valid, gate not fired, but some ground-truth paths are absent
 *   type_mismatch      valid, all paths there, some leaf of the wrong type
 *   value_error        valid, all paths there, types right, some value wrong
 *   correct            every leaf right
 */
export const ERROR_CLASSES = [
  'parse_failure',
  'schema_violation',
  'coverage_gate',
  'missing_paths',
  'type_mismatch',
  'value_error',
  'correct',
] as const;
export type ErrorClassName = (typeof ERROR_CLASSES)[number];

export interface TaxonomyRow {
  record_id: string;
  json_root_structured: number;
  schema_valid_input: number;
  schema_compliance: number;
  hier_path_recall: number;
  type_precision: number;
  leaf_value_em: number;
  missing_gt_paths?: string[];
  /** The coverage gate the row's Value Accuracy was multiplied by (1: none fired). */
  coverage_gate?: number;
}

export function classify(r: TaxonomyRow): ErrorClassName {
  if (r.json_root_structured === 0) return 'parse_failure';
  if (r.schema_valid_input === 0 || r.schema_compliance === 0) return 'schema_violation';
  // The gate that fired names the record (never "missing paths" or "value error"): the gate, not
  // the paths or values, is what set its Value Accuracy (a text record 11 of 14 leaves right: 0).
  if (r.leaf_value_em < 1 && (r.coverage_gate ?? 1) < 1) return 'coverage_gate';
  if (r.hier_path_recall < 1) return 'missing_paths';
  if (r.type_precision < 1) return 'type_mismatch';
  if (r.leaf_value_em < 1) return 'value_error';
  return 'correct';
}

export interface Taxonomy {
  n: number;
  classes: Record<ErrorClassName, { count: number; rate: number; examples: string[] }>;
  /** The most-missed ground-truth paths (ties in first-seen order). */
  topMissingPaths: { path: string; count: number }[];
}

export function taxonomy(rows: TaxonomyRow[], examples = 3, topPaths = 10): Taxonomy {
  const acc = new TaxonomyAccumulator(examples, topPaths);
  for (const r of rows) acc.add(r);
  return acc.result();
}

/** `taxonomy`, row by row: what a report of any size keeps of its rows (counts, not the rows). */
export class TaxonomyAccumulator {
  private readonly classes = Object.fromEntries(
    ERROR_CLASSES.map((c) => [c, { count: 0, rate: 0, examples: [] as string[] }]),
  ) as Taxonomy['classes'];
  private readonly missing = new Map<string, number>();
  private n = 0;

  constructor(
    private readonly examples = 3,
    private readonly topPaths = 10,
  ) {}

  add(r: TaxonomyRow): void {
    this.n++;
    const c = this.classes[classify(r)];
    c.count++;
    if (c.examples.length < this.examples) c.examples.push(r.record_id);
    for (const p of r.missing_gt_paths ?? []) this.missing.set(p, (this.missing.get(p) ?? 0) + 1);
  }

  result(): Taxonomy {
    const classes = this.classes;
    const n = this.n;
    for (const c of ERROR_CLASSES) classes[c].rate = n ? classes[c].count / n : 0;
    const topMissingPaths = [...this.missing.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, this.topPaths)
      .map(([path, count]) => ({ path, count }));
    return { n, classes, topMissingPaths };
  }
}
