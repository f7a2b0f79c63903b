/**
 * The on-disk formats (docs/formats.md): each module's writer and reader agree (a round trip), a
 * file without `format_version` reads as version 1, and a newer version is refused in the one
 * line the docs give, with exit 2.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BATCHES_FORMAT,
  BENCHMARK_MANIFEST,
  batchesDoc,
  checkBenchmarkManifest,
  checkEvalSummary,
  checkFirstLine,
  checkResponseLine,
  checkVersion,
  ERROR_LINE,
  EVAL_ROW,
  EVAL_SUMMARY,
  errorLineText,
  evalRowText,
  evalSummaryText,
  FormatVersionError,
  LEADERBOARD,
  leaderboardJsonText,
  newBatches,
  OCR_PAGES,
  ocrPageLineText,
  RESPONSE_LINE,
  RUN_MANIFEST,
  readBatches,
  readErrorLine,
  readEvalRow,
  readLeaderboardJson,
  readOcrPageLine,
  readRunManifest,
  responseLineText,
  responseRecordId,
  runManifestDoc,
  stampPyText,
} from '../../src/core/formats/index.ts';
import { parsePyJson, toPlain } from '../../src/core/pyjson.ts';
import { ensureBuilt, ROOT } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const ALL = [
  RESPONSE_LINE,
  ERROR_LINE,
  EVAL_ROW,
  EVAL_SUMMARY,
  RUN_MANIFEST,
  BENCHMARK_MANIFEST,
  BATCHES_FORMAT,
  OCR_PAGES,
  LEADERBOARD,
];

test('every format has its own name and is at version 1 in this build', () => {
  assert.equal(new Set(ALL.map((f) => f.name)).size, 9);
  for (const f of ALL) assert.equal(f.version, 1, f.name);
});

test('a newer version is refused in one line naming the file, the format and both versions, exit 2', () => {
  for (const f of ALL) {
    const err = (() => {
      try {
        checkVersion({ format_version: 3 }, f, 'x/file.json');
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof FormatVersionError, f.name);
    assert.equal(
      err.message,
      `x/file.json: format ${f.name} version 3 is newer than this sob-eval reads (1); upgrade sob-eval`,
    );
    assert.equal(err.exitCode, 2);
    assert.ok(!err.message.includes('\n'));
  }
});

test("no format_version reads as version 1; the lossless reader's bigint counts the same", () => {
  assert.equal(checkVersion({ a: 1 }, EVAL_ROW, 'f'), 1);
  assert.equal(checkVersion(new Map([['a', 1]]), EVAL_ROW, 'f'), 1);
  assert.equal(checkVersion(parsePyJson('{"format_version": 1, "a": NaN}'), EVAL_ROW, 'f'), 1);
  assert.throws(
    () => checkVersion(parsePyJson('{"format_version": 2}'), EVAL_ROW, 'f'),
    /format eval-row version 2 is newer than this sob-eval reads \(1\)/,
  );
});

test('a format_version that is no version (0, 1.5, "1", null) is one line, exit 2', () => {
  for (const bad of [0, 1.5, '1', null, -1]) {
    assert.throws(
      () => checkVersion({ format_version: bad }, EVAL_SUMMARY, 's.json'),
      (e: unknown) =>
        e instanceof FormatVersionError &&
        e.exitCode === 2 &&
        e.message ===
          `s.json: format eval-summary: format_version ${JSON.stringify(bad)} is not a version (a whole number from 1)`,
    );
  }
});

test('response line: written with format_version first, read back with its record id', () => {
  const text = responseLineText({
    metadata: new Map([['record_id', 'r1']]),
    input: new Map([['context', 'c']]),
    output: new Map([['ground_truth', null]]),
    eval_info: new Map([['attempts', 1n]]),
  });
  assert.equal(
    text,
    '{"format_version": 1, "metadata": {"record_id": "r1"}, "input": {"context": "c"}, "output": {"ground_truth": null}, "eval_info": {"attempts": 1}}',
  );
  const back = JSON.parse(text);
  assert.equal(checkResponseLine(back, 'r.jsonl:1'), 1);
  assert.equal(responseRecordId(back), 'r1');
  assert.equal(responseRecordId(parsePyJson(text)), 'r1');
  // The SOB release's lines carry no version: version 1.
  assert.equal(checkResponseLine({ metadata: { record_id: 'x' } }, 'r.jsonl:1'), 1);
});

test('error line: round trip, version first, fields in order', () => {
  const line = {
    time: '2026-01-01T00:00:00.000Z',
    record_id: 'r1',
    attempt: 2,
    error_class: 'rate_limit',
    status: 429,
    message: 'slow down',
    outcome: 'retrying',
  };
  const text = errorLineText(line);
  assert.ok(text.startsWith('{"format_version":1,"time":'));
  assert.deepEqual(readErrorLine(JSON.parse(text), 'e:1'), { format_version: 1, ...line });
  assert.equal(readErrorLine({ time: 't' }, 'e:1'), undefined);
});

test("eval row: the scorer's text stamped with Python separators, every byte after it unchanged", () => {
  const row = '{"record_id": "r1", "leaf_value_em": 1.0, "explanation": {"gate": "none"}}';
  const text = evalRowText(row);
  assert.equal(text, `{"format_version": 1, ${row.slice(1)}`);
  assert.equal(evalRowText('{}'), '{"format_version": 1}');
  assert.equal(stampPyText(EVAL_ROW, '{ }'), '{"format_version": 1}');
  const back = readEvalRow(toPlain(parsePyJson(text)), 'e.jsonl:1');
  assert.equal(back?.leaf_value_em, 1);
  assert.equal(back?.record_id, 'r1');
});

test('eval summary: the payload indented as before, format_version first; reads back as version 1', () => {
  const block = { n: 2n, metrics: {}, category_scores: {} };
  const payload = {
    response_file: 'a.jsonl',
    num_records: 2n,
    model_ids: ['m'],
    data_quality: {},
    summary: { overall: block, overall_weighted: block },
  };
  const text = evalSummaryText(payload);
  assert.ok(text.startsWith('{\n  "format_version": 1,\n  "response_file": "a.jsonl",\n  "num_records": 2,'));
  assert.ok(text.endsWith('}\n'));
  assert.equal(checkEvalSummary(JSON.parse(text), 's.json'), 1);
});

test('run and benchmark manifests: stamped first; an unversioned one reads as version 1', () => {
  const run = runManifestDoc({ tool: 'sob-eval', model: 'm' } as Parameters<typeof runManifestDoc>[0]);
  assert.deepEqual(Object.keys(run).slice(0, 2), ['format_version', 'tool']);
  assert.equal(readRunManifest(JSON.parse(JSON.stringify(run)), 'm.json').model, 'm');
  assert.equal(readRunManifest({ tool: 'sob-eval', model: 'old' }, 'm.json').model, 'old');
  assert.throws(() => readRunManifest([1], 'm.json'), /m.json: not a run manifest \(not a JSON object\)/);
  assert.throws(() => readRunManifest({ format_version: 2 }, 'm.json'), /format run-manifest version 2/);
  assert.equal(checkBenchmarkManifest({ sources: {} }, 'b.json'), 1);
  assert.throws(
    () => checkBenchmarkManifest({ format_version: 4 }, 'b.json'),
    /format benchmark-manifest version 4/,
  );
});

test('batches: a new state and an old one (only "version": 1) both write format_version first and keep "version"', () => {
  const fresh = newBatches('m');
  assert.deepEqual(Object.keys(fresh), ['format_version', 'version', 'model', 'batches']);
  const old = readBatches({ version: 1, model: 'm', batches: [] }, 'b.json');
  assert.deepEqual(JSON.stringify(batchesDoc(old)), JSON.stringify(fresh));
  assert.throws(
    () => readBatches({ model: 'm' }, 'b.json'),
    /b.json: not a batch state file \(no "batches"\)/,
  );
  assert.throws(() => readBatches({ format_version: 2, batches: [] }, 'b.json'), /format batches version 2/);
});

test('OCR page index: a read page and a skipped one round trip', () => {
  const read = {
    pdf: 'a.pdf',
    page: 1,
    transcript: 'a_pg1.md',
    method: 'ocr',
    engine: 'tesseract',
    languages: ['eng'],
  };
  const skipped = { pdf: 'b.pdf', page: null, skipped: 'not a PDF' };
  for (const l of [read, skipped]) {
    const text = ocrPageLineText(l);
    assert.ok(text.startsWith('{"format_version":1,'));
    assert.deepEqual(readOcrPageLine(JSON.parse(text), 'o:1'), { format_version: 1, ...l });
  }
});

test('leaderboard JSON: an array whose rows each carry format_version first', () => {
  const text = leaderboardJsonText([{ model: 'a', value_accuracy: 0.5 }, { model: 'b' }]);
  const rows = readLeaderboardJson(JSON.parse(text), 'l.json');
  assert.deepEqual(
    rows.map((r) => [Object.keys(r)[0], r.format_version, r.model]),
    [
      ['format_version', 1, 'a'],
      ['format_version', 1, 'b'],
    ],
  );
  assert.ok(text.startsWith('[\n  {\n    "format_version": 1,\n    "model": "a",'));
  assert.throws(
    () => readLeaderboardJson([{ model: 'a' }, { format_version: 5, model: 'b' }], 'l.json'),
    /l.json \(row 2\): format leaderboard version 5 is newer/,
  );
});

test("a JSONL file's version is read from its first line (blank lines skipped, not-JSON left to the reader)", () => {
  const dir = tempDir();
  const f = join(dir, 'r.jsonl');
  writeFileSync(f, '\n{"format_version": 1, "metadata": {}}\n{"format_version": 9}\n');
  assert.equal(checkFirstLine(f, RESPONSE_LINE), 1);
  writeFileSync(f, '\n\n{"format_version": 2, "metadata": {"x": NaN}}\n');
  assert.throws(
    () => checkFirstLine(f, RESPONSE_LINE),
    new RegExp(`${f.replace(/[.]/g, '\\.')}:3: format response-line version 2`),
  );
  writeFileSync(f, 'not json\n');
  assert.equal(checkFirstLine(f, RESPONSE_LINE), 1);
  writeFileSync(f, '');
  assert.equal(checkFirstLine(f, RESPONSE_LINE), 1);
});

test("the library's `formats` (import from 'sob-eval') reads a summary sob score wrote and refuses a newer one", async () => {
  ensureBuilt();
  const { formats, score } = await import('sob-eval');
  const dir = tempDir();
  const out = join(dir, 'ev');
  const [res] = await score([{ file: join(ROOT, 'examples/responses/response_example-model.jsonl') }], {
    outDir: out,
    summary: { bootstrapSamples: 0 },
  });
  assert.equal(res.error, undefined);
  const file = join(out, 'text/example-model/eval_summary.json');
  const doc: unknown = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(formats.checkVersion(doc, formats.EVAL_SUMMARY, file), 1);
  const summary = doc as import('../../src/core/formats/index.ts').EvalSummary;
  assert.equal(summary.num_records, 6);
  assert.equal(typeof summary.summary.overall_weighted.metrics.leaf_value_em.mean, 'number');
  assert.throws(
    () => formats.checkVersion({ ...(doc as object), format_version: 2 }, formats.EVAL_SUMMARY, file),
    formats.FormatVersionError,
  );
});
