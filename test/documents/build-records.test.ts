/**
 * `sob build records --map attachments=<column>`: a column of file paths (relative to the rows
 * file; a JSON list in the cell, a JSON row's array, or names separated by `;`), each file's kind
 * and MIME type from its extension, stored by content hash. A file not there rejects its row,
 * naming the file, line, record id and path; JSON lines are still streamed. The real
 * `sob run --input document` against the local OpenAI protocol server sends exactly those bytes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sha256Hex } from '../../src/core/attachments.ts';
import { checkBenchmark } from '../../src/core/benchmark-records.ts';
import {
  documentsOf,
  type ProtocolServer,
  pdfOf,
  pngOf,
  rows,
  runDocumentMode,
  sobIn,
  startProtocolServer,
  tempDir,
  wavOf,
} from '../kit/index.ts';

const dir = tempDir('sob-build-records-');
const data = join(dir, 'data');
let server: ProtocolServer;
const files: Record<string, Buffer> = {};

const SCHEMA = JSON.stringify({
  type: 'object',
  properties: {
    id: { type: 'string' },
    total: { type: ['number', 'null'] },
    vendor: { type: ['string', 'null'] },
  },
  required: ['id'],
});

function row(id: string, file: unknown) {
  return {
    doc_id: id,
    context: `TRANSCRIPT-OF-${id}`,
    question: `Which invoice [rid:${id}]?`,
    schema: SCHEMA,
    ground_truth: JSON.stringify({ id, total: null, vendor: null }),
    ...(file === undefined ? {} : { file }),
  };
}

before(async () => {
  server = await startProtocolServer();
  mkdirSync(join(data, 'scans'), { recursive: true });
  files['scans/a.png'] = pngOf(40, 30, 1);
  files['scans/b.PDF'] = await pdfOf(2);
  files['c.wav'] = wavOf(120, 3);
  files['d.jpeg'] = pngOf(8, 8, 4); // the name says JPEG: kind and type are the extension's
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(data, name), bytes);
  writeFileSync(join(data, 'bad.pdf'), 'not a PDF at all');
  const lines = [
    row('one', 'scans/a.png'),
    row('list', JSON.stringify(['scans/b.PDF', 'c.wav'])),
    row('array', ['scans/a.png', 'd.jpeg']),
    row('semi', 'c.wav; scans/a.png ;'),
    row('missing', 'scans/a.png;scans/nope.png'),
    row('strange', 'notes.txt'),
    row('none', undefined),
    row('broken', 'bad.pdf'),
  ];
  writeFileSync(join(data, 'rows.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const csv = [
    'doc_id,context,question,schema,ground_truth,file',
    ...lines
      .filter((l) => typeof l.file === 'string')
      .map((l) =>
        [l.doc_id, l.context, l.question, l.schema, l.ground_truth, l.file]
          .map((c) => `"${String(c).replaceAll('"', '""')}"`)
          .join(','),
      ),
  ];
  writeFileSync(join(data, 'rows.csv'), `${csv.join('\n')}\n`);
});
after(() => server.close());

const WANT: Record<string, [string, string, string][]> = {
  one: [['scans/a.png', 'image', 'image/png']],
  list: [
    ['scans/b.PDF', 'pdf', 'application/pdf'],
    ['c.wav', 'audio', 'audio/wav'],
  ],
  array: [
    ['scans/a.png', 'image', 'image/png'],
    ['d.jpeg', 'image', 'image/jpeg'],
  ],
  semi: [
    ['c.wav', 'audio', 'audio/wav'],
    ['scans/a.png', 'image', 'image/png'],
  ],
};

async function build(input: string, bench: string) {
  const out = join(bench, 'records.jsonl');
  const r = await sobIn(['build', 'records', input, '--map', 'id=doc_id,attachments=file', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  return { r, out, recs: rows(out) };
}

for (const ext of ['jsonl', 'csv'] as const) {
  test(`${ext}: each row's files are its attachments (kind and type from the extension, bytes by hash); a missing file rejects its row by file, line, id and path`, async () => {
    const bench = join(dir, `bench-${ext}`);
    const { r, out, recs } = await build(join(data, `rows.${ext}`), bench);
    const byId = new Map(recs.map((x) => [x.metadata.record_id, x]));
    const expected = ext === 'jsonl' ? ['array', 'list', 'none', 'one', 'semi'] : ['list', 'one', 'semi'];
    assert.deepEqual([...byId.keys()].sort(), expected);
    for (const [id, want] of Object.entries(WANT)) {
      if (!byId.has(id)) continue;
      const got = byId.get(id).input.attachments;
      assert.deepEqual(
        got.map((a: { kind: string; mime: string }) => [a.kind, a.mime]),
        want.map(([, k, m]) => [k, m]),
        id,
      );
      want.forEach(([name], i) => {
        assert.equal(got[i].sha256, sha256Hex(files[name]), `${id}: ${name}`);
        assert.ok(readFileSync(join(bench, got[i].path)).equals(files[name]), `${id}: ${name} stored`);
      });
    }
    assert.deepEqual(byId.get('list').input.attachments[0].pages, [1, 2]);
    assert.equal(byId.get('none')?.input.attachments, undefined);
    // No column left behind in the metadata.
    assert.equal(byId.get('one').metadata.file, undefined);
    // The distinct files, each stored once (d.jpeg is named by the JSON array row only).
    assert.equal(readdirSync(join(bench, 'attachments')).length, ext === 'jsonl' ? 4 : 3);

    // The rejections: the row's file and line, its id, the path.
    const line = 5; // JSON lines: the fifth row; CSV: the header, then the fourth row with a text cell
    assert.match(
      r.stderr,
      new RegExp(
        `rejected missing: attachment "scans/nope.png": no such file ${join(data, 'scans/nope.png').replaceAll('/', '\\/')} \\(${join(data, `rows.${ext}`).replaceAll('/', '\\/')}:${line}\\)`,
      ),
    );
    assert.match(r.stderr, /rejected strange: attachment "notes.txt": not a kind of file a record carries/);
    // A PDF that cannot be read: rejected when its record's files are stored, naming it.
    assert.match(
      r.stderr,
      new RegExp(
        `rejected broken: its documents could not be stored: attachment "bad.pdf": \\S+bad\\.pdf is not a PDF that can be read .*\\(\\S+rows\\.${ext}:${ext === 'jsonl' ? 8 : 7}\\)`,
      ),
    );
    const rejected = rows(join(bench, 'rejected.jsonl'));
    assert.deepEqual(rejected.map((x) => x.record_id).sort(), ['broken', 'missing', 'strange']);

    // The record check passes them.
    const check = await checkBenchmark(out, {});
    assert.equal(check.rejected.length, 0);
    assert.equal(check.attachments.records, ext === 'jsonl' ? 4 : 3);
  });
}

function run(bench: string, runDir: string) {
  return runDocumentMode(server.openaiBaseUrl, bench, join(dir, runDir));
}

test('sob run --input document sends exactly the files the rows named', async () => {
  // The JSON lines benchmark holds a record without documents: refused by name, nothing asked.
  let from = server.requests.length;
  const refused = await run(join(dir, 'bench-jsonl'), 'run-jsonl');
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /1 record without attachments cannot be asked with --input document: none \(line 5\)/,
  );
  assert.equal(server.requests.length, from);

  const bench = join(dir, 'bench-csv');
  const recs = rows(join(bench, 'records.jsonl'));
  from = server.requests.length;
  const r = await run(bench, 'run-csv');
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 3);
  for (const s of seen) {
    const want = recs
      .find((x) => x.metadata.record_id === s.key)
      .input.attachments.map((a: { sha256: string }) => a.sha256);
    assert.deepEqual(
      documentsOf(s).map((d) => sha256Hex(d.data)),
      want,
      `${s.key}: the bytes received`,
    );
    assert.deepEqual(
      documentsOf(s).map((d) => sha256Hex(d.data)),
      WANT[s.key as string].map(([name]) => sha256Hex(files[name])),
    );
  }
});

test('sob run on the flat rows themselves (--map attachments=file) builds and sends their files', async () => {
  const from = server.requests.length;
  const r = await sobIn(
    [
      'run',
      '--model',
      'openai:m',
      '--benchmark',
      join(data, 'rows.csv'),
      '--map',
      'id=doc_id,attachments=file',
      '--skip-invalid',
      '--input',
      'document',
      '--base-url',
      server.openaiBaseUrl,
      '--run-dir',
      join(dir, 'runs', 'flat'),
    ],
    { env: { OPENAI_API_KEY: 'k' } },
  );
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.deepEqual(seen.map((s) => s.key).sort(), ['list', 'one', 'semi']);
  for (const s of seen)
    assert.deepEqual(
      documentsOf(s).map((d) => sha256Hex(d.data)),
      WANT[s.key as string].map(([name]) => sha256Hex(files[name])),
    );
});
