/**
 * A per-record `explanation` (what the scorer wrote beside the numbers) in words a person reads:
 * `coverage_gate: 0.3086...` becomes "coverage gate 0.31: structure F1 0.50 below 0.90 for
 * image, so Value Accuracy and Faithfulness x 0.31". The `sob` profile's quirks
 * (`explanation.sob_quirks`, one per leaf they decided) come back as a list for the record view.
 */
import type { Modality } from '../core/record.ts';

export interface RowContext {
  source: Modality;
  /** `schema_compliance` of the row (the hardening factor). */
  jsonPass: number;
  /** `path_set_f1` of the row (the raw structure F1 when JSON Pass is 1). */
  structureF1: number;
}

/** [path, quirk, note] */
export type Quirk = [string, string, string];

const MAX = 300;

function clip(s: string): string {
  return s.length > MAX ? `${s.slice(0, MAX)}…` : s;
}

function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function gateText(g: number, ctx: RowContext): string {
  if (ctx.source === 'text') {
    const f1 = ctx.jsonPass === 1 ? ` ${ctx.structureF1.toFixed(2)}` : '';
    return `coverage gate 0: structure F1${f1} below 0.95 for text, so Value Accuracy and Faithfulness are 0`;
  }
  // image and audio: gate = min(1, (F1 / 0.9)^2), so F1 = 0.9 sqrt(gate) when not read off the row.
  const f1 = ctx.jsonPass === 1 ? ctx.structureF1 : 0.9 * Math.sqrt(Math.max(0, g));
  return `coverage gate ${g.toFixed(2)}: structure F1 ${f1.toFixed(2)} below 0.90 for ${ctx.source}, so Value Accuracy and Faithfulness x ${g.toFixed(2)}`;
}

/** The explanation as sentences, and the quirk list. `expl` is the row's parsed `explanation`. */
export function explainRow(expl: unknown, ctx: RowContext): { why: string; quirks: Quirk[] } {
  const parts: string[] = [];
  const quirks: Quirk[] = [];
  if (typeof expl !== 'object' || expl === null || Array.isArray(expl)) return { why: '', quirks };
  for (const [k, v] of Object.entries(expl)) {
    switch (k) {
      case 'coverage_gate':
        if (typeof v === 'number') parts.push(gateText(v, ctx));
        break;
      case 'schema_error':
        parts.push(
          `the schema itself is not valid (${clip(asText(v))}), so the answer cannot be checked against it`,
        );
        break;
      case 'validation_error':
        parts.push(`the answer fails its schema: ${clip(asText(v))}`);
        break;
      case 'not_structured':
        parts.push(`the answer is not a JSON object or array (${clip(asText(v))})`);
        break;
      case 'scoring_error':
        parts.push(`not scored: ${clip(asText(v))}`);
        break;
      case 'lenient_parse':
        if (v === true)
          parts.push('the answer parsed only after recovery (a code fence or a prefix was removed)');
        break;
      case 'sob_quirks':
        if (Array.isArray(v)) {
          for (const q of v) {
            if (typeof q !== 'object' || q === null) continue;
            const o = q as Record<string, unknown>;
            const get = (key: string) => (Object.hasOwn(o, key) ? asText(o[key]) : '');
            quirks.push([clip(get('path')), clip(get('quirk')), clip(get('note'))]);
          }
          if (quirks.length > 0)
            parts.push(
              `the sob profile's quirks decided ${quirks.length} leaf score${quirks.length === 1 ? '' : 's'} (listed below)`,
            );
        }
        break;
      default:
        parts.push(`${k.replace(/_/g, ' ')}: ${clip(asText(v))}`);
    }
  }
  return { why: parts.join('; '), quirks };
}
