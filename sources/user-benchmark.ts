/**
 * A benchmark a user wrote by hand, read where a benchmark is expected (`sob eval`, `sob run`).
 *
 * The records `sob run` asks are nested (`metadata`, `input`, `output`: docs/records.md), but a
 * person writes flat rows: `{"id", "context", "question", "schema", "ground_truth"}`, a CSV with
 * those columns, or a JSON array of them. Such a file is read as `sob build records` reads it
 * (same checks, same derived `schema_complexity`) into a records file in a folder of the
 * command's own, and that file is the benchmark; a nested records file or a folder is used as it
 * is. A row the build rejects stops the command (exit 2, each rejection already printed with its
 * line) unless the caller goes on without it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { moveAttachments } from '../src/core/attachments.ts';
import { UserError } from '../src/core/errors.ts';
import { isFlatRow } from '../src/core/record-checks.ts';

/** The first non-blank line of a text file (read as a stream: a large file is not loaded). */
async function firstLine(file: string): Promise<string | undefined> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) if (line.trim() !== '') return line.replace(/^\uFEFF/, '');
    return undefined;
  } finally {
    lines.close();
    stream.destroy();
  }
}

/**
 * Whether a file holds flat rows rather than benchmark records: a CSV, a JSON array, or JSON
 * lines whose first object has none of the record's sections and one of the flat fields.
 */
export async function holdsFlatRows(file: string): Promise<boolean> {
  if (!existsSync(file) || !statSync(file).isFile()) return false;
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return true;
  const line = await firstLine(file);
  if (line === undefined) return false;
  if (ext === '.json' && line.trimStart().startsWith('[')) return true;
  try {
    return isFlatRow(JSON.parse(line));
  } catch {
    return false; // not JSON: the benchmark reader names the line
  }
}

export interface UserBenchmark {
  /** The benchmark to use: the file itself, or the records built from its rows. */
  path: string;
  /** Set when the rows were built into records: how many were written and rejected. */
  built?: { written: number; rejected: number; warnings: number };
}

/**
 * The benchmark for `file`: itself when it holds records (or is a folder), else its flat rows
 * built into `<dir>/records.jsonl` (rejected rows in `<dir>/rejected.jsonl`, `manifest.json`
 * beside them). Rejected rows stop here (exit 2) unless `skipInvalid`.
 *
 * The rows are built in a scratch folder inside `<dir>` and moved in only once they pass (each
 * file by rename), so a re-run whose rows fail leaves the last good benchmark as it was, byte
 * for byte; that attempt's rejections are kept in `<dir>/rejected.attempt.jsonl`.
 */
export async function userBenchmark(
  file: string,
  dir: string,
  opts: {
    log: (line: string) => void;
    skipInvalid?: boolean;
    recordTimeoutMs?: number;
    /** `--map`: our field -> the user's column, as `sob build records --map` takes it. */
    map?: Record<string, string>;
    /**
     * `dir` is named by the rows' content (`userBenchmarkDir`) and shared by every command over
     * them: reused as it is when complete, else built beside it and renamed in whole (see
     * `sharedBenchmark`); nothing in it is locked, so runs over one rows file go side by side.
     */
    shared?: boolean;
  },
): Promise<UserBenchmark> {
  if (!(await holdsFlatRows(file))) {
    if (opts.map && Object.keys(opts.map).length > 0)
      throw new UserError(
        `--map renames the columns of flat rows (JSONL, JSON or CSV), and ${file} holds benchmark records: leave --map out`,
        2,
      );
    return { path: file };
  }
  if (opts.shared) return sharedBenchmark(file, dir, opts);
  const out = join(dir, 'records.jsonl');
  opts.log(
    `${file} holds flat rows (id, context, question, schema, ground_truth): read as \`sob build records\` reads them -> ${out}`,
  );
  const { buildBenchmark } = await import('./build.ts');
  mkdirSync(dir, { recursive: true });
  const scratch = join(dir, `.building-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  try {
    const res = await buildBenchmark({
      kind: 'records',
      input: file,
      out: join(scratch, 'records.jsonl'),
      log: opts.log,
      map: opts.map,
      maxWarningsLogged: 10,
      recordTimeoutMs: opts.recordTimeoutMs,
    });
    const built = { written: res.written, rejected: res.rejected, warnings: res.warningCount };
    const attempt = join(dir, 'rejected.attempt.jsonl');
    if ((res.rejected > 0 && !opts.skipInvalid) || res.written === 0) {
      // Nothing of the last good benchmark is touched; this attempt's rejections are kept.
      renameSync(res.rejectedFile, attempt);
      if (res.written === 0)
        throw new UserError(`${file}: no row became a record (see above; all in ${attempt})`, 2);
      throw new UserError(
        `${file}: ${res.rejected} row${res.rejected === 1 ? '' : 's'} rejected (listed above; all in ${attempt}): nothing was asked; fix ${res.rejected === 1 ? 'it' : 'them'}, or pass --skip-invalid to go on without ${res.rejected === 1 ? 'it' : 'them'}${existsSync(out) ? ` (${out} is left as it was)` : ''}`,
        2,
      );
    }
    // Passed: the new benchmark replaces the old, its documents first, records last (each file
    // whole, by rename).
    moveAttachments(scratch, dir);
    for (const name of ['rejected.jsonl', 'manifest.json', 'records.jsonl'])
      renameSync(join(scratch, name), join(dir, name));
    rmSync(attempt, { force: true });
    return { path: out, built };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A benchmark folder is complete once its records are in (moved in last) with its manifest. */
function complete(dir: string): boolean {
  return existsSync(join(dir, 'records.jsonl')) && existsSync(join(dir, 'manifest.json'));
}

/** Whether a complete folder's build rejected nothing (its rejected.jsonl empty). */
function rejectedNothing(dir: string): boolean {
  try {
    return statSync(join(dir, 'rejected.jsonl')).size === 0;
  } catch {
    return false;
  }
}

/**
 * Flat rows into a folder named by their content (`runs/benchmarks/<name>-<hash>`), which any
 * number of `sob run`s (and `sob score --benchmark`s) over the same rows read at once:
 *
 * - a complete folder whose build rejected no row is the benchmark as it is: reused without a
 *   lock and without rebuilding, so a run reading its records never sees them replaced (a folder
 *   with rejections is built again, so they are said again, and stop the command unless
 *   `skipInvalid`);
 * - otherwise the rows are built in a scratch folder beside it (`.<name>.tmp-<pid>-<hex>`, the
 *   build's own lock inside it) and renamed in whole; when another process renamed its own build
 *   in first, that one is used and the scratch removed. A folder being replaced (one with
 *   rejections) is moved aside first and removed after.
 */
async function sharedBenchmark(
  file: string,
  dir: string,
  opts: Parameters<typeof userBenchmark>[2],
): Promise<UserBenchmark> {
  const out = join(dir, 'records.jsonl');
  if (complete(dir) && rejectedNothing(dir)) {
    opts.log(`${file} holds flat rows: using the records built from them before, ${out}`);
    return { path: out };
  }
  opts.log(
    `${file} holds flat rows (id, context, question, schema, ground_truth): read as \`sob build records\` reads them -> ${out}`,
  );
  const { buildBenchmark } = await import('./build.ts');
  const { removeStaleTemps, renameInto, tempNameFor } = await import('../src/core/files.ts');
  mkdirSync(dirname(dir), { recursive: true });
  removeStaleTemps(dirname(dir)); // scratch folders of builds whose process is gone
  const scratch = tempNameFor(dir);
  try {
    const res = await buildBenchmark({
      kind: 'records',
      input: file,
      out: join(scratch, 'records.jsonl'),
      log: opts.log,
      map: opts.map,
      maxWarningsLogged: 10,
      recordTimeoutMs: opts.recordTimeoutMs,
    });
    const built = { written: res.written, rejected: res.rejected, warnings: res.warningCount };
    if ((res.rejected > 0 && !opts.skipInvalid) || res.written === 0) {
      const attempt = join(dirname(dir), `${basename(dir)}.rejected.jsonl`);
      renameSync(res.rejectedFile, attempt);
      if (res.written === 0)
        throw new UserError(`${file}: no row became a record (see above; all in ${attempt})`, 2);
      throw new UserError(
        `${file}: ${res.rejected} row${res.rejected === 1 ? '' : 's'} rejected (listed above; all in ${attempt}): nothing was asked; fix ${res.rejected === 1 ? 'it' : 'them'}, or pass --skip-invalid to go on without ${res.rejected === 1 ? 'it' : 'them'}`,
        2,
      );
    }
    rmSync(join(scratch, '.sob.lock'), { force: true });
    let aside: string | undefined;
    if (existsSync(dir) && !(complete(dir) && rejectedNothing(dir))) {
      // An earlier build with rejections (or an interrupted one): moved aside, then replaced.
      aside = tempNameFor(`${dir}.old`);
      try {
        renameSync(dir, aside);
      } catch {
        aside = undefined; // another process moved it first
      }
    }
    try {
      renameInto(scratch, dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Another process's build got there first: the same rows give the same records.
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !complete(dir)) throw e;
      opts.log(`${out}: built at the same time by another sob process; using that one`);
    }
    if (aside) rmSync(aside, { recursive: true, force: true });
    return { path: out, built };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Where `sob run` builds a file's flat rows: `runs/benchmarks/<name>-<12 hex of its SHA-256>`
 * (beside the run directory when one is given), so the same rows always give the same records
 * file and a re-run resumes, and edited rows (or another `--map`) give a new one.
 */
export function userBenchmarkDir(file: string, runDir?: string, map?: Record<string, string>): string {
  const root = runDir ? dirname(resolve(runDir)) : resolve('runs');
  if (!existsSync(file) || !statSync(file).isFile()) return join(root, 'benchmarks');
  const h = createHash('sha256').update(readFileSync(file));
  // Other columns mapped give other records: another folder (no --map: the hash it always had).
  if (map && Object.keys(map).length > 0) h.update(`\0--map ${JSON.stringify(Object.entries(map).sort())}`);
  const hash = h.digest('hex').slice(0, 12);
  return join(root, 'benchmarks', `${basename(file, extname(file))}-${hash}`);
}
