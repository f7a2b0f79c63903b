/**
 * issue 11 item 5: `sob build probes` writes deterministic SchemaBench-style records with ground
 * truths: escape translation and custom formats. Each ground truth validates against its own
 * schema under ajv (formats asserted), a wrong answer does not, and the gold answers score 1 on
 * the SOB value metrics: the probes count on both tracks.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { compileSchema, validateCompiled } from '../../src/core/validator.ts';

const ROOT = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'sob-probes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sob(...args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { encoding: 'utf8' });
}

interface ProbeRec {
  metadata: Record<string, unknown> & { record_id: string; probe_family: string; probe_kind: string };
  input: { context: string; question: string; json_schema: Record<string, unknown> };
  output: { ground_truth: Record<string, unknown> };
}

const out = join(dir, 'a', 'records.jsonl');
const first = sob('build', 'probes', '--out', out);
const recs: ProbeRec[] = readFileSync(out, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));

const addFormats = addFormatsPlugin as unknown as (a: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true, validateFormats: true }));

describe('sob build probes', () => {
  test('48 probes: escape 28 (7 kinds x 4), format 20 (pattern 6, format 8, words 6); none rejected', () => {
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^48 records written, 0 rejected, 0 warnings/);
    assert.match(first.stdout, /schema 48 \(weight \d+\)/);
    const per: Record<string, number> = {};
    for (const r of recs) {
      const k = `${r.metadata.probe_family}:${r.metadata.probe_kind}`;
      per[k] = (per[k] ?? 0) + 1;
    }
    assert.deepEqual(per, {
      'escape:quotes': 4,
      'escape:backslash': 4,
      'escape:newline': 4,
      'escape:tab': 4,
      'escape:control': 4,
      'escape:emoji': 4,
      'escape:rtl': 4,
      'format:pattern': 6,
      'format:format': 8,
      'format:words': 6,
    });
    for (const r of recs) {
      assert.equal(r.metadata.source, 'schema');
      assert.equal(r.metadata.track, 'both');
      assert.equal(r.metadata.source_category, `probes:${r.metadata.probe_family}`);
    }
  });

  test('deterministic: a second build writes the same bytes', () => {
    const again = join(dir, 'b', 'records.jsonl');
    assert.equal(sob('build', 'probes', '--out', again).status, 0);
    assert.equal(readFileSync(again, 'utf8'), readFileSync(out, 'utf8'));
  });

  test("every probe's ground truth validates against its schema with ajv (formats asserted) and the compliance validator", () => {
    for (const r of recs) {
      const validate = ajv.compile(r.input.json_schema);
      assert.equal(
        validate(r.output.ground_truth),
        true,
        `${r.metadata.record_id}: ${ajv.errorsText(validate.errors)}`,
      );
      const c = compileSchema(r.input.json_schema);
      assert.ok(c.ok, r.metadata.record_id);
      assert.deepEqual(validateCompiled(c.compiled, r.output.ground_truth), { valid: true, violations: [] });
    }
  });

  test('escape probes carry the hard characters, and an answer that loses one of them fails its schema', () => {
    const escapes = recs.filter((r) => r.metadata.probe_family === 'escape');
    const text = (kind: string) =>
      escapes.filter((r) => r.metadata.probe_kind === kind).map((r) => String(r.output.ground_truth.text));
    assert.ok(text('quotes').every((t) => t.includes('"')));
    assert.ok(text('backslash').every((t) => t.includes('\\')));
    assert.ok(text('newline').every((t) => t.includes('\n')));
    assert.ok(text('tab').every((t) => t.includes('\t')));
    assert.ok(text('control').every((t) => /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(t)));
    assert.ok(
      text('emoji').every((t) => /\p{Extended_Pictographic}|[\u{1d400}-\u{1d7ff}\u{1d11e}]/u.test(t)),
    );
    assert.ok(text('rtl').every((t) => /[\u0590-\u06ff\u200f\u202b]/.test(t)));
    for (const r of escapes) {
      const gt = r.output.ground_truth;
      const t = [...String(gt.text)];
      // The text as the context shows it (variants 1-3) or only in the schema (variant 4).
      if (r.metadata.record_id.endsWith('-4')) assert.ok(!r.input.context.includes(String(gt.text)));
      else assert.ok(r.input.context.includes(`\n${gt.text}\n`));
      assert.match(r.input.context, new RegExp(`It is ${t.length} characters long`));
      const lossy = { ...gt, text: t.slice(1).join('') };
      assert.equal(ajv.validate(r.input.json_schema, lossy), false, r.metadata.record_id);
    }
  });

  test('format probes: the phrase as the context gives it, not reformatted, fails the schema in all 20', () => {
    const formats = recs.filter((r) => r.metadata.probe_family === 'format');
    assert.equal(formats.length, 20);
    for (const r of formats) {
      const gt = r.output.ground_truth;
      assert.ok(r.input.context.includes(String(gt.source_text)), r.metadata.record_id);
      const unformatted = { ...gt, value: gt.source_text };
      assert.equal(ajv.validate(r.input.json_schema, unformatted), false, r.metadata.record_id);
    }
    const byId = new Map(formats.map((r) => [r.metadata.record_id, r.output.ground_truth.value]));
    assert.equal(byId.get('probe-format-format-1'), '2024-03-03');
    assert.equal(byId.get('probe-format-words-3'), 'bGlnaHRob3VzZSBmZXJyeQ==');
    assert.equal(byId.get('probe-format-words-4'), 1250);
  });

  test('the gold answers score 1.000 on every SOB metric (strict profile, formats asserted)', () => {
    const responses = join(dir, 'response_gold.jsonl');
    writeFileSync(
      responses,
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => {
          const r = JSON.parse(l);
          r.metadata.model_id = 'gold';
          r.output.candidate_response = r.output.ground_truth;
          return JSON.stringify(r);
        })
        .join('\n'),
    );
    const evalDir = join(dir, 'eval');
    const s = sob('score', responses, '--profile', 'strict', '--assert-formats', '--out', evalDir);
    assert.equal(s.status, 0, s.stderr);
    const summaryDir = readdirSync(evalDir).map((m) => join(evalDir, m, 'gold'))[0];
    const summary = JSON.parse(readFileSync(join(summaryDir, 'eval_summary.json'), 'utf8'));
    assert.equal(summary.num_records, 48);
    for (const [name, m] of Object.entries(summary.summary.overall.metrics) as [string, { mean: number }][])
      assert.equal(m.mean, 1, name);
  });
});
