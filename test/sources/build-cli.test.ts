import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const EX = join(ROOT, 'sources/examples');
const dir = mkdtempSync(join(tmpdir(), 'sob-build-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `sob <args>` in this process (test/kit/cli.ts). */
async function sob(...args: string[]) {
  const r = await sobIn(args, { cwd: ROOT });
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

interface Rec {
  metadata: {
    record_id: string;
    source: string;
    schema_complexity: string;
    context_tokens?: number;
    tokenizer?: string;
  };
  input: { context: string };
}

function records(file: string): Rec[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Rec);
}

describe('sob build on the bundled example corpus', () => {
  const out = join(dir, 'bench', 'records.jsonl');
  const manifestFile = join(dir, 'bench', 'manifest.json');

  test('text passages: 6 records, manifest text 6 / weight 15', async () => {
    const r = await sob(
      'build',
      'hotpotqa',
      join(EX, 'text/passages.json'),
      '--annotations',
      join(EX, 'text/annotations.jsonl'),
      '--out',
      out,
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^6 records written, 0 rejected, 0 warnings/);
    const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
    assert.deepEqual(m.sources.text, { records: 6, weight: 15 });
    assert.equal(m.records, 6);
  });

  test('the NXT meeting and the flat-row meeting append 4 audio records; manifest covers all 10', async () => {
    const a = await sob(
      'build',
      'ami',
      join(EX, 'ami'),
      '--annotations',
      join(EX, 'ami/annotations.jsonl'),
      '--out',
      out,
      '--append',
    );
    assert.equal(a.status, 0, a.stderr);
    assert.match(a.stderr, /SOB01a: 18 utterances, 337 tokens \(ws-punct-v1\)/);
    const b = await sob(
      'build',
      'ami',
      join(EX, 'ami-rows/SOB02a.csv'),
      '--annotations',
      join(EX, 'ami-rows/annotations.jsonl'),
      '--out',
      out,
      '--append',
    );
    assert.equal(b.status, 0, b.stderr);
    assert.match(b.stdout, /^2 records written, 0 rejected, 0 warnings/);
    assert.match(
      b.stdout,
      /benchmark now holds 10 records \(8 before \+ 2 written\): text 6 \(weight 15\), image 0 \(weight 0\), audio 4 \(weight 10\)/,
    );

    const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
    assert.deepEqual(m.sources, {
      text: { records: 6, weight: 15 },
      image: { records: 0, weight: 0 },
      audio: { records: 4, weight: 10 },
      schema: { records: 0, weight: 0 },
    });
    assert.equal(m.records, 10);
    assert.equal(m.tool_version, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    assert.ok(!Number.isNaN(Date.parse(m.created)));

    const recs = records(out);
    assert.equal(recs.length, 10);
    assert.equal(new Set(recs.map((r) => r.metadata.record_id)).size, 10);
    const count = (k: string, v: string) =>
      recs.filter((r) => (r.metadata as unknown as Record<string, string>)[k] === v).length;
    assert.equal(count('schema_complexity', 'hard'), 7);
    assert.equal(count('source', 'audio'), 4);
    const audio = recs.find((r) => r.metadata.record_id === 'ex-audio-SOB01a-actions')!;
    assert.equal(audio.metadata.context_tokens, 337);
    assert.equal(audio.metadata.tokenizer, 'ws-punct-v1');
    assert.match(audio.input.context, /^\[0:02\] FEX101: Okay, let's start\./);
    assert.equal(readFileSync(join(dir, 'bench', 'rejected.jsonl'), 'utf8'), '');
  });

  test('appending the same records again rejects each as a duplicate and keeps the file intact', async () => {
    const r = await sob(
      'build',
      'ami',
      join(EX, 'ami'),
      '--annotations',
      join(EX, 'ami/annotations.jsonl'),
      '--out',
      out,
      '--append',
    );
    assert.equal(r.status, 1);
    assert.match(r.stdout, /^0 records written, 2 rejected/);
    assert.match(r.stderr, /sob: no record passed the checks: see .*rejected\.jsonl\n$/);
    assert.equal(records(out).length, 10);
    const rejected = readFileSync(join(dir, 'bench', 'rejected.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.deepEqual(JSON.parse(rejected[0]).reasons, ['duplicate record_id "ex-audio-SOB01a-actions"']);
  });

  test("--upper writes the paper's upper-case transcripts", async () => {
    const o = join(dir, 'upper', 'records.jsonl');
    const r = await sob(
      'build',
      'ami',
      join(EX, 'ami-rows/SOB02a.csv'),
      '--annotations',
      join(EX, 'ami-rows/annotations.jsonl'),
      '--out',
      o,
      '--upper',
    );
    assert.equal(r.status, 0, r.stderr);
    const ctx = records(o)[0].input.context;
    assert.match(
      ctx,
      /^\[0:03\] FEX201: WELCOME EVERYONE\. TONIGHT WE PLAN THE SPRING BOOK SWAP AT THE ALDER STREET LIBRARY\./,
    );
    // Upper-case text is still grounded: the check folds case.
    assert.match(r.stdout, /^2 records written, 0 rejected, 0 warnings/);
  });

  test('a warning is printed for an ungrounded value and a complexity mismatch, and the record is kept', async () => {
    const ann = readFileSync(join(EX, 'ami-rows/annotations.jsonl'), 'utf8').trim().split('\n')[1];
    const a = JSON.parse(ann);
    a.ground_truth.venue = 'Town Hall';
    a.schema_complexity = 'hard';
    const file = join(dir, 'warn.jsonl');
    writeFileSync(file, `${JSON.stringify(a)}\n`);
    const o = join(dir, 'warn', 'records.jsonl');
    const r = await sob('build', 'ami', join(EX, 'ami-rows/SOB02a.csv'), '--annotations', file, '--out', o);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^1 records written, 0 rejected, 2 warnings/);
    assert.match(
      r.stderr,
      /warning: ex-audio-SOB02a-event: schema_complexity is "hard" but the schema's shape makes it "easy"/,
    );
    assert.match(
      r.stderr,
      /warning: ex-audio-SOB02a-event: ground truth value at venue is not found in the context/,
    );
    const m = JSON.parse(readFileSync(join(dir, 'warn', 'manifest.json'), 'utf8'));
    assert.deepEqual(m.sources.audio, { records: 1, weight: 3 });
  });

  test('pdf: pages come from sources/pdf (pdfToTranscripts) and become image records', {
    skip: needsData('olmocr-bench'),
  }, async () => {
    const pdf = sharedData('olmocr-bench/pdfs/earnings.pdf');
    const ann = join(dir, 'pdf-ann.jsonl');
    const annotation = {
      source_id: 'earnings_pg1',
      question:
        'Which accounting standards did the FASB issue, when, and in which fiscal year is each adopted?',
      json_schema: {
        type: 'object',
        properties: {
          standards: {
            type: 'array',
            items: {
              type: 'object',
              properties: { issued: { type: 'string' }, adopted_fiscal_year: { type: 'integer' } },
            },
          },
          termination_cost: { type: 'string' },
        },
      },
      ground_truth: {
        standards: [
          { issued: 'November 2023', adopted_fiscal_year: 2025 },
          { issued: 'December 2023', adopted_fiscal_year: 2026 },
          { issued: 'November 2024', adopted_fiscal_year: 2028 },
        ],
        termination_cost: '$1.4 billion',
      },
    };
    writeFileSync(ann, `${JSON.stringify(annotation)}\n`);
    const o = join(dir, 'pdf', 'records.jsonl');
    const r = await sob('build', 'pdf', pdf, '--annotations', ann, '--out', o);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^1 records written, 0 rejected, 0 warnings/);
    const [rec] = records(o) as (Rec & { metadata: { page: number; source_pdf: string } })[];
    assert.equal(rec.metadata.record_id, 'pdf-earnings_pg1-1');
    assert.equal(rec.metadata.source, 'image');
    assert.equal(rec.metadata.schema_complexity, 'hard');
    assert.equal(rec.metadata.page, 1);
    assert.match(rec.input.context, /In February 2022, NVIDIA and SoftBank Group Corp/);
    const m = JSON.parse(readFileSync(join(dir, 'pdf', 'manifest.json'), 'utf8'));
    assert.deepEqual(m.sources.image, { records: 1, weight: 3 });
  });

  test('usage errors exit 2: no --annotations, unknown kind, no --out', async () => {
    const noAnn = await sob(
      'build',
      'hotpotqa',
      join(EX, 'text/passages.json'),
      '--out',
      join(dir, 'x.jsonl'),
    );
    assert.equal(noAnn.status, 2);
    assert.equal(
      noAnn.stderr,
      'sob: building from hotpotqa needs --annotations FILE (questions, schemas and ground truths per source id)\n',
    );
    assert.equal((await sob('build', 'wiki', 'x', '--out', 'y')).status, 2);
    assert.equal((await sob('build', 'sob', 'x.jsonl')).status, 2);
    const help = await sob('build', '--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Examples:\n {2}sob build hotpotqa/);
  });

  test('a missing input is one clear line and exit 1', async () => {
    const r = await sob(
      'build',
      'ami',
      join(dir, 'nope'),
      '--annotations',
      join(EX, 'ami/annotations.jsonl'),
      '--out',
      join(dir, 'n.jsonl'),
    );
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim().split('\n').at(-1), `sob: no such file or folder: ${join(dir, 'nope')}`);
  });
});
