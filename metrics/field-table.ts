/**
 * Which fields to trust (docs/formats.md "fields.jsonl"): per collapsed field path and model, the share of
 * ground-truth leaves answered right, with a 95% interval and n, worst first; the field flips
 * between two runs; the field gates. Pure: the rows come in from `fields.jsonl` readers.
 *
 * "Right" is the lenient verdict (the comparator that decided: a policy's, the schema's
 * `x-sob-match` or ExtractBench `evaluation_config`) for folders scored with `--match`, else the
 * exact comparison in place; a leaf the judge left pending or unscored is not counted. Gates do
 * not enter: a field is judged by its own values (the row's `gate` says when a record's Value
 * Accuracy was held down).
 */
import type { FieldRow } from '../src/core/formats/field-row.ts';

/** A field row's verdict: lenient when scored with `--match`, else exact; null: not counted. */
export function fieldVerdict(r: Pick<FieldRow, 'exact' | 'lenient' | 'lenient_verdict'>): boolean | null {
  if (r.lenient_verdict !== null && r.lenient_verdict !== undefined) return r.lenient ?? null;
  return r.exact;
}

/** Wilson score interval for k successes in n trials (95%: z = 1.959964). */
export function wilson(k: number, n: number, z = 1.959963984540054): [number, number] {
  if (n === 0) return [0, 0];
  const p = k / n;
  const z2 = z * z;
  const den = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / den;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / den;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export interface FieldStat {
  model: string;
  /** The schema's short hash when the records do not share one schema; else null. */
  schema: string | null;
  field: string;
  /** Leaves counted (a pending or unscored lenient verdict is not). */
  n: number;
  right: number;
  accuracy: number;
  ci95_low: number;
  ci95_high: number;
  /** Which verdict `accuracy` counts: `lenient` (scored with --match) or `exact`. */
  by: 'lenient' | 'exact';
  /** The exact comparison's accuracy over every leaf of the field (n_exact of them). */
  exact_accuracy: number;
  n_exact: number;
}

/** Records a schema needs, in a per-schema table, for its fields to be listed. */
export const MIN_SCHEMA_RECORDS = 2;

interface Cell {
  model: string;
  schema: string;
  field: string;
  n: number;
  right: number;
  lenientSeen: boolean;
  nExact: number;
  exactRight: number;
}

/** Counts field rows per (model, schema, field): memory grows with distinct fields, not rows. */
export class FieldTally {
  private readonly cells = new Map<string, Cell>();
  /**
   * Each schema's distinct records (by id) until it has `MIN_SCHEMA_RECORDS` of them, then `true`:
   * a schema of one record has no field to trust, and no schema holds every id of a large file.
   */
  private readonly schemas = new Map<string, Set<string> | true>();
  /** Per model, every leaf with a verdict and those answered right (single-record schemas too: cost per correct field). */
  readonly perModel = new Map<string, { right: number; n: number }>();

  add(model: string, r: FieldRow): void {
    const schema = typeof r.schema === 'string' ? r.schema : '';
    let recs = this.schemas.get(schema);
    if (recs !== true) {
      if (recs === undefined) this.schemas.set(schema, (recs = new Set()));
      recs.add(JSON.stringify(r.record_id));
      if (recs.size >= MIN_SCHEMA_RECORDS) this.schemas.set(schema, true);
    }
    const key = `${model}\u0000${schema}\u0000${r.field}`;
    let c = this.cells.get(key);
    if (!c) {
      c = { model, schema, field: r.field, n: 0, right: 0, lenientSeen: false, nExact: 0, exactRight: 0 };
      this.cells.set(key, c);
    }
    c.nExact++;
    if (r.exact) c.exactRight++;
    const lenient = r.lenient_verdict !== null && r.lenient_verdict !== undefined;
    if (lenient) c.lenientSeen = true;
    const v = fieldVerdict(r);
    if (v === null) return;
    c.n++;
    if (v) c.right++;
    let m = this.perModel.get(model);
    if (!m) {
      m = { right: 0, n: 0 };
      this.perModel.set(model, m);
    }
    m.n++;
    if (v) m.right++;
  }

  /** Whether the rows came from more than one schema (the table is then per schema). */
  get perSchema(): boolean {
    return this.schemas.size > 1;
  }

  get size(): number {
    return this.cells.size;
  }

  /**
   * Per schema: the schemas left out of the table because a single record has them (a benchmark
   * whose every record has a schema of its own, such as SOB's, has no per-field table).
   */
  get singleRecordSchemas(): number {
    if (!this.perSchema) return 0;
    let n = 0;
    for (const recs of this.schemas.values()) if (recs !== true) n++;
    return n;
  }

  /**
   * Every (model, field) cell, worst first: accuracy up, then more leaves first, then by name.
   * Per schema, only schemas at least `MIN_SCHEMA_RECORDS` records share.
   */
  stats(): FieldStat[] {
    const per = this.perSchema;
    const out: FieldStat[] = [];
    for (const c of this.cells.values()) {
      if (per && this.schemas.get(c.schema) !== true) continue;
      const [lo, hi] = wilson(c.right, c.n);
      out.push({
        model: c.model,
        schema: per ? c.schema : null,
        field: c.field,
        n: c.n,
        right: c.right,
        accuracy: c.n === 0 ? 0 : c.right / c.n,
        ci95_low: lo,
        ci95_high: hi,
        by: c.lenientSeen ? 'lenient' : 'exact',
        exact_accuracy: c.nExact === 0 ? 0 : c.exactRight / c.nExact,
        n_exact: c.nExact,
      });
    }
    return out.sort(worstFirst);
  }
}

export function worstFirst(a: FieldStat, b: FieldStat): number {
  return (
    a.accuracy - b.accuracy ||
    b.n - a.n ||
    (a.field < b.field ? -1 : a.field > b.field ? 1 : 0) ||
    (a.model < b.model ? -1 : a.model > b.model ? 1 : 0) ||
    ((a.schema ?? '') < (b.schema ?? '') ? -1 : (a.schema ?? '') > (b.schema ?? '') ? 1 : 0)
  );
}

/** A field's flips between run A and run B over the leaves both have (same record and path). */
export interface FieldFlip {
  field: string;
  /** Leaves both runs scored. */
  n: number;
  /** Right in A, wrong in B. */
  lost: number;
  /** Wrong in A, right in B. */
  gained: number;
  /** Example leaves (record id and path) of each kind, at most 3. */
  lost_examples: string[];
  gained_examples: string[];
}

/** One leaf's key across runs: its record and path. */
export function leafKey(r: Pick<FieldRow, 'record_id' | 'path'>): string {
  return `${JSON.stringify(r.record_id)}\u0000${r.path}`;
}

/**
 * The flips per field: `a` maps a leaf's key to [field, verdict] (from run A's rows); run B's rows
 * go through `addB`. Fields with no flip are listed too (their n), flips first, most flips first.
 */
export class FlipTally {
  private readonly fields = new Map<string, FieldFlip>();
  constructor(private readonly a: Map<string, boolean | null>) {}

  addB(r: FieldRow): void {
    const va = this.a.get(leafKey(r));
    const vb = fieldVerdict(r);
    if (va === undefined || va === null || vb === null) return;
    let f = this.fields.get(r.field);
    if (!f) {
      f = { field: r.field, n: 0, lost: 0, gained: 0, lost_examples: [], gained_examples: [] };
      this.fields.set(r.field, f);
    }
    f.n++;
    const ex = `${typeof r.record_id === 'string' ? r.record_id : JSON.stringify(r.record_id)} ${r.path}`;
    if (va && !vb) {
      f.lost++;
      if (f.lost_examples.length < 3) f.lost_examples.push(ex);
    } else if (!va && vb) {
      f.gained++;
      if (f.gained_examples.length < 3) f.gained_examples.push(ex);
    }
  }

  flips(): FieldFlip[] {
    return [...this.fields.values()].sort(
      (x, y) => y.lost + y.gained - (x.lost + x.gained) || y.lost - x.lost || (x.field < y.field ? -1 : 1),
    );
  }
}

/** `--fail-under field:<path>=<min>`: every model's accuracy on that collapsed field must reach min. */
export interface FieldThreshold {
  field: string;
  min: number;
}

/**
 * The `field:<path>=<min>` items of `--fail-under` arguments (each a comma-separated list; other
 * items are `parseThresholds`'). Throws an Error saying which item is wrong and why.
 */
export function parseFieldThresholds(args: string[]): FieldThreshold[] {
  const out: FieldThreshold[] = [];
  for (const arg of args)
    for (const item of arg.split(',')) {
      const t = item.trim();
      if (!t.startsWith('field:')) continue;
      const eq = t.lastIndexOf('=');
      const field = eq < 0 ? '' : t.slice('field:'.length, eq).trim();
      if (eq < 0 || field === '')
        throw new Error(`"${t}": expected field:<path>=minimum, e.g. field:line_items[].amount=0.9`);
      const v = t.slice(eq + 1).trim();
      const min = Number(v);
      if (v === '' || !Number.isFinite(min) || min < 0 || min > 1)
        throw new Error(`"${t}": the minimum must be a number from 0 to 1`);
      out.push({ field, min });
    }
  return out;
}

export interface FieldGateResult {
  model: string;
  field: string;
  schema: string | null;
  min: number;
  /** null: the model has no leaf of that field (fails: a gate that cannot be checked does not hold). */
  accuracy: number | null;
  n: number;
  ok: boolean;
}

/**
 * Checks field thresholds on the table's cells. A field path is matched collapsed
 * (`line_items[0].amount` and `line_items[].amount` name the same field); per schema, each
 * schema's cell is checked on its own.
 */
export function checkFieldThresholds(
  stats: FieldStat[],
  models: string[],
  thresholds: FieldThreshold[],
): FieldGateResult[] {
  const out: FieldGateResult[] = [];
  for (const t of thresholds) {
    const field = t.field.replace(/\[\d*\]/g, '[]').replace(/\[\*\]/g, '[]');
    for (const model of models) {
      const cells = stats.filter((s) => s.model === model && s.field === field && s.n > 0);
      if (cells.length === 0) {
        out.push({ model, field, schema: null, min: t.min, accuracy: null, n: 0, ok: false });
        continue;
      }
      for (const c of cells)
        out.push({
          model,
          field,
          schema: c.schema,
          min: t.min,
          accuracy: c.accuracy,
          n: c.n,
          ok: c.accuracy >= t.min,
        });
    }
  }
  return out;
}

export function fieldGateLine(r: FieldGateResult): string {
  const where = r.schema ? ` (schema ${r.schema})` : '';
  return r.accuracy === null
    ? `gate failed: ${r.model}: field ${r.field} has no scored leaf (needs >= ${r.min})`
    : `gate failed: ${r.model}: field ${r.field}${where} accuracy ${r.accuracy.toFixed(3)} < ${r.min} (n ${r.n})`;
}
