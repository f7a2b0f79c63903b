/**
 * The quality judge's answer handling against the local protocol server: answers that fail
 * validation are asked again and never turned into a score; transport failures are retried;
 * our answer schemas are ones OpenAI's strict mode accepts; a refused schema falls back to the
 * prompt; meetings need a true/false `needs_multiple_turns`; resume drops a torn line and asks
 * again about a record whose prompt changed.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { QUALITY_SCHEMA } from '../../judges/quality.ts';
import { REVIEW_SCHEMA } from '../../judges/reviewer.ts';
import {
  type Outcome,
  openaiStrictProblems,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { sobIn } from '../kit/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-quality-'));
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome = () => ({ kind: 'answer', text: '{}' });

before(async () => {
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const CONTEXT = 'The Harbour Light was built in 1872 by Ada Finch. It stands 31 metres tall on Gull Rock.';
const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, built: { type: 'integer' }, builder: { type: 'string' } },
  required: ['name', 'built', 'builder'],
};
const GT = { name: 'Harbour Light', built: 1872, builder: 'Ada Finch' };
function rec(id: string, question = 'Which lighthouse, when, by whom?') {
  return JSON.stringify({
    metadata: { record_id: id, source: 'text', schema_complexity: 'easy' },
    input: { context: CONTEXT, question, json_schema: SCHEMA },
    output: { ground_truth: GT },
  });
}

const MEETING = [
  '[0:01] MEX201: Shall we hold the book swap on Saturday?',
  '[0:05] FEX202: Saturday works. I can bring the folding tables.',
  '[0:09] MEX201: Then Priya handles the posters.',
].join('\n');
const MEETING_SCHEMA = {
  type: 'object',
  properties: { day: { type: 'string' }, tables_by: { type: 'string' }, posters_by: { type: 'string' } },
  required: ['day', 'tables_by', 'posters_by'],
};
const audioRec = (id: string) =>
  JSON.stringify({
    metadata: { record_id: id, source: 'audio', schema_complexity: 'easy' },
    input: { context: MEETING, question: 'Who does what, and when?', json_schema: MEETING_SCHEMA },
    output: { ground_truth: { day: 'Saturday', tables_by: 'FEX202', posters_by: 'Priya' } },
  });

type Answer = {
  accuracy?: unknown;
  grounding?: unknown;
  schema_quality?: unknown;
  needs_multiple_turns?: unknown;
  rationale?: unknown;
};
const answerText = (a: Answer) =>
  JSON.stringify({
    accuracy: 90,
    grounding: 90,
    schema_quality: 90,
    needs_multiple_turns: null,
    rationale: 'scripted',
    ...a,
  });
const answer = (a: Answer): Outcome => ({ kind: 'answer', text: answerText(a) });

/** `sob <args>` in this process (test/kit/cli.ts), with a made-up key. */
function sob(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return sobIn(args, { env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: '' } });
}
const judgeArgs = (records: string, out: string, ...more: string[]) => [
  'judge',
  records,
  '--judge',
  'openai:judge',
  '--base-url',
  server.openaiBaseUrl,
  '--retry-base-ms',
  '5',
  '--out',
  out,
  ...more,
];
const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const ids = (f: string) => lines(f).map((x) => (x.metadata as { record_id: string }).record_id);
const byId = (f: string) => new Map(lines(f).map((j) => [String(j.record_id), j]));

test('an answer that fails validation is asked again and never scored; transport failures are retried', async () => {
  const records = join(tmp, 'validation.jsonl');
  writeFileSync(
    records,
    ['out-of-range', 'no-rationale', 'fractional', 'server-500', 'fenced'].map((id) => rec(id)).join('\n'),
  );
  script = (r) => {
    switch (r.key) {
      case 'out-of-range': // 150 first, then a valid answer
        return r.n === 1 ? answer({ accuracy: 150 }) : answer({ accuracy: 75 });
      case 'no-rationale': // never valid: judge_error after 3 attempts
        return answer({ rationale: undefined });
      case 'fractional': // our schema asks for integers
        return answer({ grounding: 59.5 });
      case 'server-500': // a transport failure is retried inside one attempt
        return r.n === 1 ? { kind: 'status', status: 500 } : answer({});
      case 'fenced':
        return { kind: 'answer', text: `\`\`\`json\n${answerText({ accuracy: 61 })}\n\`\`\`` };
      default:
        return answer({});
    }
  };
  const out = join(tmp, 'validation-out');
  const r = await sob(judgeArgs(records, out));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /3 accepted, 2 rejected \(0 by the checks, 2 judge errors\)/);
  assert.deepEqual(ids(join(out, 'accepted.jsonl')), ['out-of-range', 'server-500', 'fenced']);

  const j = byId(join(out, 'judgments.jsonl'));
  assert.equal(j.get('out-of-range')?.attempts, 2);
  assert.deepEqual(j.get('out-of-range')?.scores, { accuracy: 75, grounding: 90, schema_quality: 90 });
  assert.equal(server.counts.get('out-of-range'), 2);
  assert.equal(j.get('no-rationale')?.attempts, 3);
  assert.match(String(j.get('no-rationale')?.judge_error), /^rationale: Required/);
  assert.equal(j.get('no-rationale')?.scores, undefined);
  assert.match(String(j.get('fractional')?.judge_error), /^grounding: Expected integer/);
  assert.equal(server.counts.get('fractional'), 3);
  assert.equal(j.get('server-500')?.attempts, 1); // the 500 was a transport retry, not an attempt
  assert.equal(server.counts.get('server-500'), 2);
  assert.equal(j.get('fenced')?.attempts, 1);

  // judge_error rows are rejected with their own stage, not as low quality.
  const rej = lines(join(out, 'rejected.jsonl'));
  assert.deepEqual(
    rej.map((x) => [x.record_id, x.stage]),
    [
      ['no-rationale', 'judge_error'],
      ['fractional', 'judge_error'],
    ],
  );
  assert.match(String(rej[0].origin), /validation\.jsonl:2$/);
});

test('our answer schemas pass OpenAI strict-mode rules, so constrained judging is not refused', async () => {
  // The checker itself: the answer schema as first written (needs_multiple_turns optional) fails.
  const loose = { ...QUALITY_SCHEMA, required: ['accuracy', 'grounding', 'schema_quality', 'rationale'] };
  assert.deepEqual(openaiStrictProblems(loose), ['(root): "needs_multiple_turns" is not in required']);
  assert.deepEqual(openaiStrictProblems(QUALITY_SCHEMA), []);
  assert.deepEqual(openaiStrictProblems(REVIEW_SCHEMA), []);

  // Over the wire: the server refuses what OpenAI would refuse; every request carries the schema.
  const records = join(tmp, 'strict.jsonl');
  writeFileSync(records, ['s1', 's2'].map((id) => rec(id)).join('\n'));
  const refused: string[] = [];
  const sent: string[] = [];
  script = (r) => {
    const rf = r.body.response_format as { type: string; json_schema: { schema: unknown; strict: boolean } };
    sent.push(`${r.model} ${rf?.type} strict=${rf?.json_schema?.strict}`);
    const problems = openaiStrictProblems(rf.json_schema.schema);
    if (problems.length > 0) {
      refused.push(r.key ?? '');
      return { kind: 'status', status: 400, message: `Invalid schema for response_format: ${problems[0]}` };
    }
    return r.model === 'reviewer' ? { kind: 'answer', text: '{"issues": []}' } : answer({});
  };
  const out = join(tmp, 'strict-out');
  const r = await sob(judgeArgs(records, out, '--reviewer', 'openai:reviewer'));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(refused, []);
  assert.deepEqual(sent.sort(), [
    'judge json_schema strict=true',
    'judge json_schema strict=true',
    'reviewer json_schema strict=true',
    'reviewer json_schema strict=true',
  ]);
  const j = lines(join(out, 'judgments.jsonl'));
  assert.equal(j.length, 4);
  assert.ok(j.every((x) => x.constrained === true));
  assert.deepEqual(ids(join(out, 'accepted.jsonl')), ['s1', 's2']);
});

test('a provider that refuses the answer schema is asked again with the schema in the prompt only', async () => {
  const records = join(tmp, 'refuse.jsonl');
  writeFileSync(records, rec('refuse-1'));
  script = (r) =>
    r.body.response_format
      ? { kind: 'status', status: 400, message: 'response_format json_schema is not supported by this model' }
      : answer({ accuracy: 88 });
  const out = join(tmp, 'refuse-out');
  const r = await sob(judgeArgs(records, out));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.counts.get('refuse-1'), 2); // one refusal, one plain request
  const j = lines(join(out, 'judgments.jsonl'))[0];
  assert.equal(j.constrained, false);
  assert.equal(j.attempts, 1);
  assert.deepEqual(j.scores, { accuracy: 88, grounding: 90, schema_quality: 90 });
  assert.deepEqual(ids(join(out, 'accepted.jsonl')), ['refuse-1']);
});

test('a meeting record needs a true/false needs_multiple_turns; the summary counts them', async () => {
  const records = join(tmp, 'audio.jsonl');
  writeFileSync(records, [audioRec('meet-1'), audioRec('meet-2'), rec('text-1')].join('\n'));
  script = (r) => {
    if (r.key === 'meet-1') return answer({ needs_multiple_turns: r.n === 1 ? null : true });
    if (r.key === 'meet-2') return answer({ needs_multiple_turns: false });
    return answer({}); // null is right for a text record
  };
  const out = join(tmp, 'audio-out');
  const r = await sob(judgeArgs(records, out));
  assert.equal(r.code, 0, r.stderr);
  const j = byId(join(out, 'judgments.jsonl'));
  assert.equal(j.get('meet-1')?.attempts, 2);
  assert.equal(j.get('meet-1')?.needs_multiple_turns, true);
  assert.equal(j.get('meet-2')?.needs_multiple_turns, false);
  assert.equal(j.get('text-1')?.needs_multiple_turns, null);
  assert.equal(j.get('text-1')?.attempts, 1);
  // The meeting's prompt says what the field means.
  const asked = server.requests.find((x) => x.key === 'meet-2')!;
  assert.match(asked.systemText, /needs_multiple_turns must be true or false/);
  assert.match(asked.userText, /\(source: audio\)/);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  assert.deepEqual(s.per_source.audio, { records: 2, accepted: 2, acceptance: 1, needs_multiple_turns: 1 });
});

test('resume: a torn last line is dropped and only a record whose prompt changed is asked again', async () => {
  const records = join(tmp, 'resume.jsonl');
  writeFileSync(records, ['p1', 'p2', 'p3'].map((id) => rec(id)).join('\n'));
  script = () => answer({});
  const out = join(tmp, 'resume-out');
  assert.equal((await sob(judgeArgs(records, out))).code, 0);
  const first = lines(join(out, 'judgments.jsonl'));
  assert.equal(first.length, 3);
  assert.equal(new Set(first.map((x) => x.prompt_sha256)).size, 3); // the record is in the prompt
  assert.equal(new Set(first.map((x) => x.template_sha256)).size, 1); // one prompt version

  // A crash mid-write, and a person edits p2's question.
  appendFileSync(join(out, 'judgments.jsonl'), '{"record_id": "p3", "judge": "openai:ju');
  writeFileSync(
    records,
    [rec('p1'), rec('p2', 'Name the lighthouse, its year and builder.'), rec('p3')].join('\n'),
  );
  const before = server.total;
  const again = await sob(judgeArgs(records, out));
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.total - before, 1);
  assert.equal(server.counts.get('p2'), 2);
  assert.equal(server.counts.get('p1'), 1);
  assert.match(again.stderr, /resuming: 2 judgments already made, 1 to ask \(1 whose prompt changed\)/);
  const text = readFileSync(join(out, 'judgments.jsonl'), 'utf8');
  assert.ok(text.endsWith('\n'));
  assert.equal(text.split('\n').filter(Boolean).length, 4); // 3 + the new p2; the torn line is gone
  assert.deepEqual(ids(join(out, 'accepted.jsonl')), ['p1', 'p2', 'p3']);
});
