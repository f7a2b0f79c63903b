/**
 * A small evaluation for the review tests: six text records, three models answering through
 * `replay:` in a real `sob eval`, so the folder is what users get. The flags it should give, in
 * order: r1.city, r1.year, r2.city, r3.year, r4.name, r5.year, r6.name (see each record).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, year: { type: 'integer' }, name: { type: 'string' } },
  required: ['city', 'year', 'name'],
};

/** Hostile text: if any of it ran, window.__pwned would be set. */
export const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

type Leaves = { city: string; year: number | string; name: string };
const R: { id: string; context: string; gold: Leaves; answers: [Leaves, Leaves, Leaves] }[] = [];
const same = (l: Leaves): [Leaves, Leaves, Leaves] => [l, l, l];
// r1: every model reads Paris 1902 where the gold says Lyon 1901 (Lyon is nowhere in the text).
R.push({
  id: 'r1',
  context: 'Ada was born in Paris in 1902.',
  gold: { city: 'Lyon', year: 1901, name: 'Ada' },
  answers: same({ city: 'Paris', year: 1902, name: 'Ada' }),
});
// r2: two models say Roma, one ROME (exact wrong, lenient right).
R.push({
  id: 'r2',
  context: 'Bo has lived in Rome (Roma) since 1950.',
  gold: { city: 'Rome', year: 1950, name: 'Bo' },
  answers: [
    { city: 'ROME', year: 1950, name: 'Bo' },
    { city: 'Roma', year: 1950, name: 'Bo' },
    { city: 'Roma', year: 1950, name: 'Bo' },
  ],
});
// r3: every model says 2001.
R.push({
  id: 'r3',
  context: 'Cy moved to Oslo in 2000 and was born there in 2001.',
  gold: { city: 'Oslo', year: 2000, name: 'Cy' },
  answers: same({ city: 'Oslo', year: 2001, name: 'Cy' }),
});
// r4: hostile gold and context; every model says Dee.
R.push({
  id: 'r4',
  context: `Dee lives in Nice since 1800. ${HOSTILE}`,
  gold: { city: 'Nice', year: 1800, name: HOSTILE },
  answers: same({ city: 'Nice', year: 1800, name: 'Dee' }),
});
// r5: the gold's year is a string, so the gold fails its schema; the models give the integer.
R.push({
  id: 'r5',
  context: 'Eve, Bern, 1900.',
  gold: { city: 'Bern', year: '1900', name: 'Eve' },
  answers: same({ city: 'Bern', year: 1900, name: 'Eve' }),
});
// r6: all right; only the judge flags it (judge/judgments.jsonl).
R.push({
  id: 'r6',
  context: 'Fay, Graz, 1990.',
  gold: { city: 'Graz', year: 1990, name: 'Fay' },
  answers: same({ city: 'Graz', year: 1990, name: 'Fay' }),
});

export const RECORD_IDS = R.map((r) => r.id);
export const MODELS = ['m1', 'm2', 'm3'];

/** Writes the benchmark and the three models' response files; returns their paths. */
export function writeFixture(dir: string): { benchmark: string; responses: string[] } {
  mkdirSync(join(dir, 'bench'), { recursive: true });
  const benchmark = join(dir, 'bench', 'records.jsonl');
  writeFileSync(
    benchmark,
    R.map(
      (r) =>
        `${JSON.stringify({
          metadata: { record_id: r.id, source: 'text', schema_complexity: 'easy' },
          input: {
            context: r.context,
            question: `Where and when? ${r.id === 'r4' ? HOSTILE : ''}`,
            json_schema: SCHEMA,
          },
          output: { ground_truth: r.gold },
        })}\n`,
    ).join(''),
  );
  const responses = MODELS.map((m, i) => {
    const file = join(dir, `${m}.jsonl`);
    writeFileSync(
      file,
      R.map(
        (r) =>
          `${JSON.stringify({
            metadata: { record_id: r.id, model_id: m },
            input: { context: r.context, question: '', json_schema: SCHEMA },
            output: { ground_truth: r.gold, candidate_response: r.answers[i] },
          })}\n`,
      ).join(''),
    );
    return file;
  });
  return { benchmark, responses };
}

/** A judge's judgments (what sob judge writes): a reviewer issue at r6's name. */
export function writeJudgments(evalDir: string): void {
  mkdirSync(join(evalDir, 'judge'), { recursive: true });
  writeFileSync(
    join(evalDir, 'judge', 'judgments.jsonl'),
    `${JSON.stringify({ record_id: 'r6', judge: 'reviewer:x', issues: [{ kind: 'unsupported', path: 'name', reason: 'spelling unclear' }] })}\n`,
  );
}
