/**
 * issue 9 item 11: `sob author` takes the same inputs as `sob build` (the HotpotQA file, an AMI
 * corpus folder), and its drafts are annotations `sob build` ingests as they are. The drafting
 * model is a scripted one on the local OpenAI-protocol server.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ProtocolServer, type SeenRequest, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobIn } from '../kit/cli.ts';

const ROOT = join(import.meta.dirname, '../..');
const EX = join(ROOT, 'sources/examples');
const tmp = mkdtempSync(join(tmpdir(), 'sob-author-in-'));
let server: ProtocolServer;

/** A good draft per source id: the first hand annotation of that item in the example corpus. */
const drafts = new Map<string, { question: string; json_schema: unknown; ground_truth: unknown }>();
for (const f of ['text/annotations.jsonl', 'ami/annotations.jsonl']) {
  for (const l of readFileSync(join(EX, f), 'utf8').split('\n').filter(Boolean)) {
    const a = JSON.parse(l);
    if (!drafts.has(a.source_id)) drafts.set(a.source_id, a);
  }
}

function script(r: SeenRequest) {
  const a = drafts.get(r.key ?? '');
  if (!a) return { kind: 'status' as const, status: 400, message: `no draft for ${r.key}` };
  const { question, json_schema, ground_truth } = a;
  return { kind: 'answer' as const, text: JSON.stringify({ question, json_schema, ground_truth }) };
}

before(async () => {
  server = await startProtocolServer({ script });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `sob <args>` in this process (test/kit/cli.ts), in the test's folder, with a made-up key. */
function sob(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return sobIn(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: '' } });
}

const base = () => ['--base-url', server.openaiBaseUrl, '--retry-base-ms', '5'];

describe('sob author reads what sob build reads', () => {
  test('the HotpotQA file build takes: 4 drafts, one per passage, then build ingests them: 4 records', async () => {
    const passages = join(EX, 'text/passages.json');
    const a = await sob(['author', passages, '--model', 'openai:author', '--out', 'hp.jsonl', ...base()]);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stderr, /4 hotpotqa source items from /);
    assert.match(a.stdout, /^4 drafts written, 0 rejected/);
    const ids = readFileSync(join(tmp, 'hp.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).source_id);
    assert.deepEqual(ids, ['ex-text-001', 'ex-text-002', 'ex-text-003', 'ex-text-004']);
    // The prompt carries the passage as build writes it: "title: sentences".
    const seen = server.requests.find((r) => r.key === 'ex-text-001')!;
    assert.match(seen.userText, /Velmora Lighthouse: /);

    const b = await sob([
      'build',
      'hotpotqa',
      passages,
      '--annotations',
      'hp.jsonl',
      '--out',
      'hp/records.jsonl',
    ]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /^4 records written, 0 rejected/);
    assert.match(b.stdout, /benchmark now holds 4 records: text 4 /);
  });

  test('an AMI corpus folder: one draft per meeting, ingested by sob build ami', async () => {
    const corpus = join(EX, 'ami');
    const a = await sob(['author', corpus, '--model', 'openai:author', '--out', 'ami.jsonl', ...base()]);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^1 drafts written, 0 rejected/);
    const seen = server.requests.find((r) => r.key === 'SOB01a')!;
    assert.match(seen.userText, /\(source: audio\)/);
    assert.match(seen.userText, /\[0:02\] FEX101: Okay, let's start\./);
    const b = await sob(['build', 'ami', corpus, '--annotations', 'ami.jsonl', '--out', 'ami/records.jsonl']);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /^1 records written, 0 rejected/);
    assert.match(b.stdout, /audio 1 /);
  });

  test('--kind items still reads the {id, context} format; a file of no known kind is one clear line', async () => {
    const bad = await sob([
      'author',
      join(EX, 'README.md'),
      '--model',
      'openai:author',
      '--out',
      'x.jsonl',
      ...base(),
    ]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr.trim().split('\n').at(-1)!, /^sob: .*README\.md:1: not JSON$/);
    const wrongKind = await sob([
      'author',
      'x',
      '--kind',
      'wiki',
      '--model',
      'openai:author',
      '--out',
      'y.jsonl',
    ]);
    assert.equal(wrongKind.code, 2);
  });

  test('the annotations format is in sob build --help, and its example line is a record the checks accept', async () => {
    const h = await sob(['build', '--help']);
    assert.equal(h.code, 0);
    for (const field of [
      'source_id',
      'question',
      'json_schema',
      'ground_truth',
      'record_id',
      'schema_complexity',
    ])
      assert.match(h.stdout, new RegExp(`\\n  ${field} +`));
    const example = /Example line:\n((?: {2,3}.*\n)+)/.exec(h.stdout)![1].replace(/\n\s*/g, ' ');
    const ann = JSON.parse(example);
    const { checkRecord } = await import('../../sources/checks.ts');
    const res = checkRecord({
      metadata: { record_id: 'x', source: 'text' },
      input: {
        context: "The Denver Broncos won in 2016 at Levi's Stadium.",
        question: ann.question,
        json_schema: ann.json_schema,
      },
      output: { ground_truth: ann.ground_truth },
    });
    assert.deepEqual(res.errors, []);
    assert.deepEqual(res.warnings, []);
  });

  test('--out in a folder that does not exist yet: made, not a raw ENOENT; a torn last line is cut before the next draft; a link is refused', async () => {
    const passages = join(EX, 'text/passages.json');
    // Before: "sob: ENOENT: no such file or directory, open 'new/dir/hp.rejected.jsonl'" (exit 1, nothing drafted).
    const a = await sob([
      'author',
      passages,
      '--model',
      'openai:author',
      '--out',
      'new/dir/hp.jsonl',
      ...base(),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^4 drafts written, 0 rejected/);
    const file = join(tmp, 'new/dir/hp.jsonl');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 4);
    assert.equal(existsSync(join(tmp, 'new/dir/.hp.jsonl.lock')), false);

    // A crash mid-write left half of the last draft: the resume drafts that item again on a line
    // of its own (before: appended to the torn line, so it never parsed and was drafted every run).
    writeFileSync(file, `${lines.slice(0, 3).join('\n')}\n${lines[3].slice(0, 40)}`);
    const b = await sob([
      'author',
      passages,
      '--model',
      'openai:author',
      '--out',
      'new/dir/hp.jsonl',
      ...base(),
    ]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /^1 drafts written, 0 rejected, 3 already drafted/);
    const after = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(after.length, 4);
    assert.deepEqual(
      after.map((l) => JSON.parse(l).source_id),
      ['ex-text-001', 'ex-text-002', 'ex-text-003', 'ex-text-004'],
    );
    const c = await sob([
      'author',
      passages,
      '--model',
      'openai:author',
      '--out',
      'new/dir/hp.jsonl',
      ...base(),
    ]);
    assert.match(c.stdout, /^0 drafts written, 0 rejected, 4 already drafted/);

    // A drafts file that is a symbolic link is refused in one line, the target untouched.
    writeFileSync(join(tmp, 'victim.txt'), 'keep\n');
    symlinkSync(join(tmp, 'victim.txt'), join(tmp, 'linked.jsonl'));
    const d = await sob(['author', passages, '--model', 'openai:author', '--out', 'linked.jsonl', ...base()]);
    assert.equal(d.code, 1);
    assert.match(
      d.stderr.trim().split('\n').at(-1)!,
      /^sob: refusing to write through a symbolic link: .*linked\.jsonl/,
    );
    assert.equal(readFileSync(join(tmp, 'victim.txt'), 'utf8'), 'keep\n');
  });
});
