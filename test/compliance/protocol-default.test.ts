/**
 * The compliance protocol follows the data, and says why (issue 30 item 3): records built with
 * `sob build schemas` (a user's own schemas) are read in their own draft (`dialect`), so a valid
 * UUID is a valid `uuid`; the same schema and answers built with `sob build jsonschemabench` are
 * read as the paper's harness reads them (`jsonschemabench`: no value satisfies `uuid`), and the
 * field is named in one warning at build, when scored, in the summary, the leaderboard and the
 * report. `--protocol` overrides the default, and the line says it was asked.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { reportData, sob } from '../report/run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-protocol-default-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SCHEMA = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
  required: ['id', 'name'],
};
const GOOD = '{"id": "123e4567-e89b-12d3-a456-426614174000", "name": "a"}';
const BAD = '{"id": "not-a-uuid", "name": "a"}';

// One folder, read by both builders: `<dataset>/<id>.json` is JSONSchemaBench's layout too.
const schemas = join(tmp, 'schemas');
mkdirSync(join(schemas, 'Mine'), { recursive: true });
writeFileSync(join(schemas, 'Mine', 'person.json'), JSON.stringify(SCHEMA));

/** Responses to every record of a records file: each record once per answer, ids suffixed. */
function answer(records: string, out: string, answers: string[]): string {
  const lines: string[] = [];
  for (const l of readFileSync(records, 'utf8').trim().split('\n')) {
    const r = JSON.parse(l);
    answers.forEach((raw, i) => {
      const metadata = { ...r.metadata, record_id: `${r.metadata.record_id}#${i}`, model_id: 'm' };
      lines.push(
        JSON.stringify({
          ...r,
          metadata,
          output: { ...r.output, candidate_response: JSON.parse(raw), raw_response: raw },
          eval_info: {},
        }),
      );
    });
  }
  mkdirSync(out, { recursive: true });
  const file = join(out, 'response_m.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function rowsOf(
  dir: string,
): Map<string, { valid: boolean; protocol: string; unsatisfiable_formats?: string[] }> {
  const m = new Map();
  for (const l of readFileSync(join(dir, 'schema/m/eval_records.jsonl'), 'utf8').trim().split('\n')) {
    const r = JSON.parse(l);
    m.set(r.record_id, r.compliance);
  }
  return m;
}
const summaryOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'schema/m/eval_summary.json'), 'utf8'));

const DIALECT_WHY = /the default for schema records not built from JSONSchemaBench/;
const JSB_WHY = /the default for records built from JSONSchemaBench: the paper's harness, quirks included/;

test('sob build schemas + sob score: a valid UUID is a valid uuid (dialect, and the line says why); no format warning', () => {
  const records = join(tmp, 'own.jsonl');
  const b = sob('build', 'schemas', schemas, '--out', records);
  assert.equal(b.status, 0, b.stderr);
  assert.doesNotMatch(b.stderr, /no value can satisfy/);
  const out = join(tmp, 'eval-own');
  const r = sob(
    'score',
    answer(records, join(tmp, 'resp-own'), [GOOD, BAD]),
    '--out',
    out,
    '--bootstrap-samples',
    '0',
  );
  assert.equal(r.status, 0, r.stderr);
  const rows = rowsOf(out);
  assert.deepEqual(
    [...rows].map(([id, c]) => [id, c.protocol, c.valid]),
    [
      ['Mine/person#0', 'dialect', true],
      ['Mine/person#1', 'dialect', false],
    ],
  );
  assert.equal(rows.get('Mine/person#0')?.unsatisfiable_formats, undefined);
  // The score line names the protocol and why; so does the summary.
  assert.match(
    r.stdout,
    /empirical 0\.500 \(1\/2\).*protocol: dialect \(the default for schema records not built/,
  );
  const s = summaryOf(out);
  assert.equal(s.protocol, 'dialect');
  assert.match(s.protocol_reason, DIALECT_WHY);
  assert.equal(s.unsatisfiable_formats, undefined);
  assert.doesNotMatch(r.stderr, /no value can satisfy/);
  const lb = sob('leaderboard', out, '--track', 'compliance');
  assert.equal(lb.status, 0, lb.stderr);
  assert.match(
    lb.stdout,
    /Validation protocol: dialect \(the default for schema records not built from JSONSchemaBench/,
  );

  // --protocol overrides the default, and says it was asked.
  const asked = join(tmp, 'eval-own-asked');
  const a = sob(
    'score',
    join(tmp, 'resp-own', 'response_m.jsonl'),
    '--out',
    asked,
    '--bootstrap-samples',
    '0',
    '--protocol',
    'jsonschemabench',
  );
  assert.equal(a.status, 0, a.stderr);
  assert.deepEqual(
    [...rowsOf(asked).values()].map((c) => [c.protocol, c.valid]),
    [
      ['jsonschemabench', false],
      ['jsonschemabench', false],
    ],
  );
  assert.equal(summaryOf(asked).protocol_reason, '--protocol as asked');
  assert.match(
    a.stderr,
    /warning: Mine\/person#0: format no value can satisfy under the jsonschemabench protocol .*#\/properties\/id \(uuid\)/,
  );
});

test('sob build jsonschemabench + sob score: the same answers judged as the harness judges them; one warning naming the field at build, at score, in the summary, leaderboard and report', () => {
  const records = join(tmp, 'jsb.jsonl');
  const b = sob('build', 'jsonschemabench', schemas, '--out', records);
  assert.equal(b.status, 0, b.stderr);
  const warned = b.stderr.split('\n').filter((l) => /no value can satisfy/.test(l));
  assert.equal(warned.length, 1, b.stderr);
  assert.match(
    warned[0],
    /^warning: jsb-Mine-person: format no value can satisfy under the jsonschemabench protocol .*: #\/properties\/id \(uuid\); --protocol dialect/,
  );
  const out = join(tmp, 'eval-jsb');
  const r = sob(
    'score',
    answer(records, join(tmp, 'resp-jsb'), [GOOD, BAD]),
    '--out',
    out,
    '--bootstrap-samples',
    '0',
  );
  assert.equal(r.status, 0, r.stderr);
  const rows = rowsOf(out);
  // The harness's uuid check returns None: neither answer is valid, the good UUID included.
  assert.deepEqual(
    [...rows].map(([id, c]) => [id, c.protocol, c.valid, c.unsatisfiable_formats]),
    [
      ['jsb-Mine-person#0', 'jsonschemabench', false, ['#/properties/id (uuid)']],
      ['jsb-Mine-person#1', 'jsonschemabench', false, ['#/properties/id (uuid)']],
    ],
  );
  assert.match(
    r.stdout,
    /empirical 0\.000 \(0\/2\).*protocol: jsonschemabench \(the default for records built from JSONSchemaBench/,
  );
  assert.equal(r.stderr.split('\n').filter((l) => /#\/properties\/id \(uuid\)/.test(l)).length, 2);
  const s = summaryOf(out);
  assert.equal(s.protocol, 'jsonschemabench');
  assert.match(s.protocol_reason, JSB_WHY);
  assert.equal(s.data_quality.unsatisfiable_format_schema_count, 2);
  assert.deepEqual(s.unsatisfiable_formats, [
    { record_id: 'jsb-Mine-person#0', formats: ['#/properties/id (uuid)'] },
    { record_id: 'jsb-Mine-person#1', formats: ['#/properties/id (uuid)'] },
  ]);
  const lb = sob('leaderboard', out, '--track', 'compliance');
  assert.equal(lb.status, 0, lb.stderr);
  assert.match(
    lb.stdout,
    /Validation protocol: jsonschemabench \(the default for records built from JSONSchemaBench/,
  );
  assert.match(
    lb.stdout,
    /Warning: m: 2 schemas with a format no value can satisfy under the jsonschemabench protocol.*jsb-Mine-person#0 #\/properties\/id \(uuid\)/,
  );
  const html = join(tmp, 'jsb.html');
  const rep = sob('report', out, '--out', html);
  assert.equal(rep.status, 0, rep.stderr);
  const d = reportData<{
    compliance: {
      summaries: {
        protocol: string;
        protocolReason: string;
        unsatisfiable: { record_id: string; formats: string[] }[];
      }[];
    };
  }>(html);
  assert.equal(d.compliance.summaries[0].protocol, 'jsonschemabench');
  assert.match(d.compliance.summaries[0].protocolReason, JSB_WHY);
  assert.deepEqual(d.compliance.summaries[0].unsatisfiable[0], {
    record_id: 'jsb-Mine-person#0',
    formats: ['#/properties/id (uuid)'],
  });

  // The same records under --protocol dialect: the good UUID is valid again, and no warning.
  const dial = join(tmp, 'eval-jsb-dialect');
  const x = sob(
    'score',
    join(tmp, 'resp-jsb', 'response_m.jsonl'),
    '--out',
    dial,
    '--bootstrap-samples',
    '0',
    '--protocol',
    'dialect',
  );
  assert.equal(x.status, 0, x.stderr);
  assert.deepEqual(
    [...rowsOf(dial).values()].map((c) => c.valid),
    [true, false],
  );
  assert.doesNotMatch(x.stderr, /no value can satisfy/);
});
