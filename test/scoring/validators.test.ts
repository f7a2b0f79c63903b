/**
 * Issue 13 item 2: each distinct schema is compiled once per run (one worker compiles, the others
 * take its code) and kept between runs (a validator cache). Neither may change a single byte of
 * the outputs: scored with one worker and no cache, with two workers and an empty cache, and again
 * with the cache full, the folders are the same, and the cache holds one file per schema text.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CACHE_EXT } from '../../src/scoring/validators.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';
import { SOB } from './cli.ts';

const SKIP = needsData('sob');
const DATA = sharedData('sob/images_responses');
// Two files of each schema family (the Gemini files carry other schemas than the rest).
const FILES = (SKIP ? [] : readdirSync(DATA))
  .filter((f) => /DeepSeek|Ministral|gemini-2\.5-flash|gemini-2\.5-pro/.test(f))
  .map((f) => join(DATA, f));
const tmp = mkdtempSync(join(tmpdir(), 'sob-validators-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function score(out: string, jobs: number, cache: string) {
  const r = spawnSync(
    process.execPath,
    [SOB, 'score', ...FILES, '--out', out, '--jobs', String(jobs), '--bootstrap-samples', '50'],
    { encoding: 'utf8', cwd: tmp, env: { ...process.env, SOB_VALIDATOR_CACHE: cache } },
  );
  assert.equal(r.status, 0, r.stderr);
}

function folders(out: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const model of readdirSync(join(out, 'image')).sort())
    for (const f of ['eval_records.jsonl', 'eval_summary.json'])
      m.set(`${model}/${f}`, readFileSync(join(out, 'image', model, f), 'utf8'));
  return m;
}

test('shared and cached validators give byte-identical folders; the cache holds each schema once, with its V8 code cache', {
  skip: SKIP,
}, () => {
  assert.equal(FILES.length, 4);
  const cache = join(tmp, 'cache');
  score(join(tmp, 'alone'), 1, 'off');
  score(join(tmp, 'cold'), 2, cache);
  const cached = readdirSync(cache).filter((f) => f.endsWith(CACHE_EXT));
  // 209 schemas in each family, a few of them alike: at most one file per distinct schema text
  // (a schema is compiled when an answer needs validating: one with no JSON answer is not), each
  // holding the validator's code and its V8 code cache; nothing else (no temp files).
  assert.ok(cached.length > 300 && cached.length <= 418, `${cached.length} cached validators`);
  assert.deepEqual(
    readdirSync(cache).filter((f) => !f.endsWith(CACHE_EXT)),
    [],
  );
  for (const f of cached.slice(0, 20)) {
    const buf = readFileSync(join(cache, f));
    const codeBytes = buf.readUInt32LE(0);
    assert.match(buf.toString('utf8', 4, 4 + codeBytes), /^"use strict";/, f);
    assert.ok(buf.length > 4 + codeBytes, `${f}: no V8 code cache`);
  }
  // A warm run reads them (its V8 accepts the code caches) and writes nothing.
  const before = new Map(cached.map((f) => [f, readFileSync(join(cache, f))]));
  score(join(tmp, 'warm'), 2, cache);
  assert.equal(readdirSync(cache).length, cached.length);
  for (const [f, buf] of before) assert.ok(readFileSync(join(cache, f)).equals(buf), f);
  const alone = folders(join(tmp, 'alone'));
  assert.equal(alone.size, 8);
  assert.deepEqual(folders(join(tmp, 'cold')), alone);
  assert.deepEqual(folders(join(tmp, 'warm')), alone);
});
