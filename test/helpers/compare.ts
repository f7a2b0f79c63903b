/**
 * Field-by-field comparison of our outputs with the reference's: numbers within a tolerance
 * (`tol` 0: exactly, `===`, and an int must be an int and a float a float), strings and list
 * items exactly; keys the reference has must all be there (extra keys of ours, such as
 * `explanation`, are allowed). A difference names the field (`model[row].key`, `model.a.b`).
 */
import { type PyValue, parsePyJson } from '../../src/core/pyjson.ts';

export interface Comparison {
  fields: number;
  /** Of the fields, how many are numbers (ints and floats). */
  numbers?: number;
  diffs: string[];
}

function num(v: PyValue): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return null;
}

export function compareValues(
  ref: PyValue,
  ours: PyValue | undefined,
  path: string,
  tol: number,
  out: Comparison,
  ignore: Set<string> = new Set(),
): void {
  const rn = num(ref);
  if (rn !== null) {
    out.fields++;
    out.numbers = (out.numbers ?? 0) + 1;
    const on = ours === undefined ? null : num(ours);
    const same =
      on !== null &&
      (tol === 0
        ? typeof ref === typeof ours && (ref === ours || (Number.isNaN(rn) && Number.isNaN(on)))
        : Math.abs(rn - on) <= tol || (Number.isNaN(rn) && Number.isNaN(on)));
    if (!same) out.diffs.push(`${path}: reference ${String(ref)}, ours ${String(ours)}`);
    return;
  }
  if (ref instanceof Map) {
    if (!(ours instanceof Map)) {
      out.fields++;
      out.diffs.push(`${path}: reference is an object, ours ${String(ours)}`);
      return;
    }
    for (const [k, v] of ref) {
      if (ignore.has(k)) continue;
      compareValues(v, ours.get(k), path ? `${path}.${k}` : k, tol, out, ignore);
    }
    return;
  }
  if (Array.isArray(ref)) {
    if (!Array.isArray(ours) || ours.length !== ref.length) {
      out.fields++;
      out.diffs.push(
        `${path}: reference list of ${ref.length}, ours ${Array.isArray(ours) ? `list of ${ours.length}` : String(ours)}`,
      );
      return;
    }
    ref.forEach((v, i) => {
      compareValues(v, ours[i], `${path}[${i}]`, tol, out, ignore);
    });
    return;
  }
  out.fields++;
  if (ref !== ours) out.diffs.push(`${path}: reference ${JSON.stringify(ref)}, ours ${JSON.stringify(ours)}`);
}

export function compareJsonText(
  refText: string,
  oursText: string,
  label: string,
  tol: number,
  out: Comparison,
  ignore?: Set<string>,
): void {
  compareValues(parsePyJson(refText), parsePyJson(oursText), label, tol, out, ignore);
}
