/**
 * The benchmark's compact index (issue 35: memory flat in records): per record its byte offset,
 * length, line, modality and id hash in typed arrays, the record's line read back when asked.
 * Checked against the loader it replaces (`InMemoryBenchmark`, kept as the reference): every
 * record read the same on a file with CRLF, lone CR, a byte order mark, blank lines, non-ASCII
 * text, repeated ids, a source filter, a limit and excluded lines; and end to end, `sob score
 * --benchmark` and `sob eval` on the bundled example write byte-identical eval_records.jsonl,
 * eval_summary.json and benchmark_ids.json under the index and under the reference
 * (SOB_BENCHMARK_REFERENCE=memory), the sob profile and the strict one.
 */
import assert from 'node:assert/strict';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import { IdSet, SlotLines } from '../../src/core/id-hash.ts';
import { readLinesSync } from '../../src/core/jsonl.ts';
import {
  BenchmarkIndex,
  type BenchmarkRef,
  HashLines,
  InMemoryBenchmark,
  idHash,
  linesWithOffsets,
} from '../../src/scoring/benchmark.ts';
import { ROOT, sobSync } from '../kit/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-index-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const rec = (id: string, source: string | undefined, gt: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    metadata: { record_id: id, ...(source ? { source } : {}), ...extra },
    input: {
      context: 'ctx ü 漢字',
      question: 'q',
      json_schema: { type: 'object', properties: { a: { type: 'string' } } },
    },
    output: { ground_truth: gt },
  });

test('the index reads every selected record as the in-memory loader does (CRLF, lone CR, BOM, blanks, repeats, filters)', () => {
  const file = join(tmp, 'odd.jsonl');
  const lines = [
    `\ufeff${rec('a', 'text', { a: 'x' }, { schema_complexity: 'hard' })}`,
    rec('b', 'image', { a: 'ÿ漢' }),
    '',
    `  ${rec('c', undefined, { a: 'no source' }, { difficulty: 'easy' })}  `,
    rec('a', 'text', { a: 'the repeat: not taken' }),
    rec('d', 'schema', null, { accepted_alternatives: { a: ['y'] }, gold_version: 2 }),
    rec('e', 'text', { a: 'e' }),
    rec('f', 'text', { a: 'f' }),
  ];
  // Line ends of every kind, one after another.
  const ends = ['\r\n', '\n', '\r', '\n', '\r\n', '\r', '\n', ''];
  writeFileSync(file, lines.map((l, i) => l + ends[i]).join(''));
  // The byte offsets give back the lines readLinesSync reads.
  const read = [...readLinesSync(file)].map((l) => [l.line, l.text]);
  assert.deepEqual(
    [...linesWithOffsets(file)].map((l) => [l.line, l.text]),
    read,
  );
  assert.equal(read.length, 7);
  for (const ref of [
    { path: file },
    { path: file, source: 'text' },
    { path: file, limit: 3 },
    { path: file, exclude: [2, 7] },
  ] as BenchmarkRef[]) {
    const idx = BenchmarkIndex.build(ref);
    const mem = InMemoryBenchmark.load(ref);
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'zz', ''])
      assert.deepEqual(idx.get(id), mem.get(id), `${JSON.stringify(ref)}: ${id}`);
    // Per modality: counts and the unanswered ids in the same order ('c' names no source: image here).
    const answered = new HashLines();
    answered.set('b', 1);
    answered.set('e', 2);
    const by = (_m: string, lo: number, hi: number) => answered.getHash(lo, hi) !== undefined;
    assert.deepEqual([...idx.unanswered('image', by)], [...mem.unanswered('image', by)], JSON.stringify(ref));
    idx.close();
  }
  const all = BenchmarkIndex.build({ path: file });
  assert.equal(all.size, 6);
  assert.equal(all.get('a')?.groundTruthText, '{"a":"x"}');
  assert.equal(all.get('a')?.schemaComplexity, 'hard');
  assert.deepEqual(
    [...all.unanswered('text', () => false)].map(([m, e]) => [m, e.count, e.missing.join(',')]),
    [
      // The records that name no source follow the modality's own, as the loader always had them.
      ['text', 4, 'a,e,f,c'],
      ['image', 1, 'b'],
      ['schema', 1, 'd'],
    ],
  );
  // A worker's copy from the shared arrays reads the same.
  const shared = BenchmarkIndex.fromShare(all.share());
  assert.deepEqual(shared.get('d'), all.get('d'));
  assert.ok(all.share().offset.buffer instanceof SharedArrayBuffer);
  all.close();
  shared.close();
});

test('HashLines holds what a Map of ids to first lines holds, at 200,000 ids', () => {
  const h = new HashLines();
  const m = new Map<string, number>();
  for (let i = 0; i < 200_000; i++) {
    const id = `rec-${(i * 7919) % 150_000}`;
    if (!m.has(id)) m.set(id, i);
    if (h.get(id) === undefined) h.set(id, i);
  }
  assert.equal(h.size, m.size);
  assert.equal(h.size, 150_000);
  for (const [id, line] of m) assert.equal(h.get(id), line);
  assert.equal(h.get('rec-150000'), undefined);
  // The two halves differ for ids that differ in one character.
  assert.notDeepEqual(idHash('rec-1'), idHash('rec-2'));
});

/** Every file under a folder, by relative path, as bytes. */
function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

const EXAMPLE = join(ROOT, 'examples/responses/response_example-model.jsonl');
/** The example's lines that are JSON (it holds one that is not, on purpose). */
const exampleLines = () =>
  readFileSync(EXAMPLE, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => {
      try {
        JSON.parse(l);
        return true;
      } catch {
        return false;
      }
    });

test('sob score --benchmark on the bundled example: byte-identical eval files under the index and the in-memory reference, sob and strict', () => {
  // The example's records as a benchmark, with one more record no answer has and one without a source.
  const answers = exampleLines();
  const records = answers.map((l) => {
    const r = JSON.parse(l);
    delete r.output.candidate_response;
    delete r.output.raw_response;
    delete r.eval_info;
    delete r.metadata.model_id;
    return JSON.stringify(r);
  });
  const extra = JSON.parse(records[0]);
  extra.metadata.record_id = 'unanswered-1';
  delete extra.metadata.source;
  records.push(JSON.stringify(extra));
  const bench = join(tmp, 'example-bench.jsonl');
  writeFileSync(bench, `${records.join('\r\n')}\r\n`);
  for (const profile of ['sob', 'strict']) {
    const got: Map<string, Buffer>[] = [];
    for (const reference of ['memory', undefined]) {
      const out = join(tmp, `score-${profile}`);
      rmSync(out, { recursive: true, force: true });
      const r = sobSync(
        [
          'score',
          EXAMPLE,
          '--benchmark',
          bench,
          '--profile',
          profile,
          '--out',
          out,
          '--bootstrap-samples',
          '200',
          '--skip-invalid',
        ],
        { env: { SOB_BENCHMARK_REFERENCE: reference } },
      );
      assert.equal(r.code, 0, r.stderr);
      got.push(filesOf(out));
    }
    const [ref, idx] = got;
    assert.deepEqual([...idx.keys()], [...ref.keys()]);
    assert.ok(ref.has('text/example-model/eval_records.jsonl'), [...ref.keys()].join(', '));
    for (const [name, bytes] of ref)
      assert.ok(bytes.equals(idx.get(name) as Buffer), `${profile}: ${name} differs`);
    // Three sources scored, 9 answers that are JSON less the one rejected record; the extra record unanswered.
    const rows = ['text', 'image', 'audio'].map(
      (m) => ref.get(`${m}/example-model/eval_records.jsonl`)?.toString().trim().split('\n').length,
    );
    assert.equal(
      rows.reduce((a, b) => (a ?? 0) + (b ?? 0), 0),
      8,
    );
    const ids = JSON.parse(ref.get('text/example-model/benchmark_ids.json')?.toString() ?? '{}');
    assert.deepEqual(ids.missing_ids, ['unanswered-1']);
  }
});

test('sob eval on the bundled example (build, run baseline:gold, score): byte-identical eval files under the index and the reference', () => {
  const rows = join(tmp, 'rows.jsonl');
  const answers = exampleLines();
  writeFileSync(
    rows,
    `${answers
      .map((l) => {
        const r = JSON.parse(l);
        return JSON.stringify({
          id: r.metadata.record_id,
          context: r.input.context,
          question: r.input.question,
          schema: r.input.json_schema,
          ground_truth: r.output.ground_truth,
        });
      })
      .join('\n')}\n`,
  );
  const got: Map<string, Buffer>[] = [];
  for (const reference of ['memory', undefined]) {
    const dir = join(tmp, 'eval');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    const r = sobSync(
      ['eval', rows, '--model', 'baseline:gold', '--eval-dir', dir, '--no-report', '--skip-invalid'],
      {
        env: { SOB_BENCHMARK_REFERENCE: reference },
        cwd: tmp,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const files = filesOf(dir);
    const kept = new Map(
      [...files].filter(([k]) => /eval_(records\.jsonl|summary\.json)$|benchmark_ids\.json$/.test(k)),
    );
    got.push(kept);
    cpSync(dir, join(tmp, `eval-${reference ?? 'index'}`), { recursive: true });
  }
  const [ref, idx] = got;
  assert.ok(ref.size >= 2, [...ref.keys()].join(', '));
  assert.deepEqual([...idx.keys()], [...ref.keys()]);
  for (const [name, bytes] of ref) assert.ok(bytes.equals(idx.get(name) as Buffer), `${name} differs`);
});

test("the scorer's id table by benchmark slot (SlotLines) answers as a HashLines of every id: known ids, unknown ids, repeats", () => {
  const file = join(tmp, 'slots.jsonl');
  // 1,500 benchmark records; the answers name 2,000 ids (500 the benchmark lacks), with repeats.
  writeFileSync(
    file,
    `${Array.from({ length: 1500 }, (_, i) => rec(`r${i}`, 'text', { a: `${i}` })).join('\n')}\n`,
  );
  const idx = BenchmarkIndex.build({ path: file });
  assert.equal(idx.slots, 1500);
  assert.equal(idx.countOf('text', 'text'), 1500);
  assert.equal(idx.countOf('image', 'text'), 0);
  const slots = new SlotLines(idx);
  const plain = new HashLines();
  const answers = Array.from({ length: 3000 }, (_, k) => `r${(k * 7919) % 2000}`);
  answers.forEach((id, line) => {
    // What file-state.ts does: the first line of each id kept, repeats seen.
    assert.equal(slots.get(id), plain.get(id), `${id} before line ${line}`);
    if (plain.get(id) === undefined) {
      plain.set(id, line);
      slots.set(id, line);
    }
  });
  assert.equal(plain.size, 2000);
  assert.equal(slots.size, 2000);
  for (let i = 0; i < 2100; i++) {
    const id = `r${i}`;
    const [lo, hi] = idHash(id);
    assert.equal(slots.getHash(lo, hi), plain.getHash(lo, hi), id);
    // Known ids sit in their record's slot, the others not.
    assert.equal(idx.slotOf(lo, hi) >= 0, i < 1500, id);
  }
  // Without an index it is a HashLines.
  const bare = new SlotLines();
  bare.set('x', 4);
  assert.equal(bare.get('x'), 4);
  assert.equal(bare.size, 1);
});

test('IdSet: add, has, delete and size as a Set of the ids (a deleted id can come back; the others stay found)', () => {
  const ids = new IdSet();
  const ref = new Set<string>();
  for (let k = 0; k < 5000; k++) {
    const id = `id-${(k * 37) % 3000}`;
    if (k % 5 === 4) {
      assert.equal(ids.delete(id), ref.delete(id), `delete ${id}`);
    } else {
      ids.add(id);
      ref.add(id);
    }
    assert.equal(ids.size, ref.size, `size after ${k}`);
  }
  for (let i = 0; i < 3100; i++) assert.equal(ids.has(`id-${i}`), ref.has(`id-${i}`), `id-${i}`);
  assert.ok(ref.size > 1000 && ref.size < 3000, `${ref.size}`);
});
