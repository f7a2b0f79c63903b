/**
 * `sob review <eval-dir>` as a use case (docs/review.md): the flagged leaves of an evaluation
 * served on a local page (127.0.0.1, a random port, a random token in the URL), each decision
 * appended durably to `<eval-dir>/review/decisions.jsonl` before the page hears "saved".
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { flattenLeaves } from '../../metrics/paths.ts';
import { pyEquals } from '../../metrics/values.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { type PyValue, parsePyJson, toPlain } from '../core/pyjson.ts';
import { validateInstance } from '../core/schema.ts';
import { type FlagItem, type FlagOptions, flagRecords, sameLeaf } from '../report/review-flags.ts';
import { reviewCsp, reviewPage } from '../report/review-page.ts';
import {
  activeDecisions,
  appendDecision,
  currentDecisions,
  DECISIONS,
  type Decision,
  type DecisionKind,
  jsonText,
  type LoadedRecord,
  leafKey,
  loadReviewData,
  type ReviewData,
  readDecisions,
  repairDecisions,
  valueAt,
  withLeaf,
} from './review-data.ts';

export interface ReviewSettings {
  evalDir: string;
  reviewer: string;
  benchmark?: string;
  flags?: FlagOptions;
  /** 0: a random free port. */
  port?: number;
}

export interface Review {
  data: ReviewData;
  items: FlagItem[];
}

/** The evaluation read and flagged (what the page lists and `--list` prints). */
export function prepareReview(s: { evalDir: string; benchmark?: string; flags?: FlagOptions }): Review {
  const data = loadReviewData(s.evalDir, { benchmark: s.benchmark });
  return { data, items: flagRecords(data.records, data.external, s.flags) };
}

const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** A file inside the evaluation folder (symbolic links resolved), or null. */
export function insideFolder(root: string, rel: string): string | null {
  if (rel === '' || rel.includes('\0')) return null;
  const target = isAbsolute(rel) ? rel : resolve(root, rel);
  let real: string;
  let realRoot: string;
  try {
    real = realpathSync(target);
    realRoot = realpathSync(root);
  } catch {
    return null;
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep)) return null;
  return real;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One reviewer's server over one evaluation. */
export class ReviewServer {
  readonly token = randomBytes(24).toString('base64url');
  private server?: Server;
  private port = 0;
  private readonly byId: Map<string, LoadedRecord>;
  private readonly itemIndex = new Map<string, FlagItem>();

  constructor(
    readonly review: Review,
    readonly reviewer: string,
  ) {
    this.byId = new Map(review.data.records.map((r) => [r.id, r]));
    for (const it of review.items) this.itemIndex.set(leafKey(it.record_id, it.path), it);
  }

  get evalDir(): string {
    return this.review.data.evalDir;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/?token=${this.token}`;
  }

  async listen(port = 0): Promise<string> {
    repairDecisions(this.evalDir);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e) => this.send(res, 500, { error: errorMessage(e) }));
    });
    await new Promise<void>((ok, fail) => {
      this.server!.once('error', fail);
      this.server!.listen(port, '127.0.0.1', () => ok());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this.url;
  }

  close(): Promise<void> {
    return new Promise((ok) => (this.server ? this.server.close(() => ok()) : ok()));
  }

  private send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
    const data = Buffer.isBuffer(body)
      ? body
      : Buffer.from(type === 'application/json' ? JSON.stringify(body) : String(body));
    res.writeHead(status, {
      'content-type': type === 'application/json' ? 'application/json; charset=utf-8' : type,
      'content-length': data.length,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cross-origin-resource-policy': 'same-origin',
    });
    res.end(data);
  }

  private tokenOk(url: URL, req: IncomingMessage): boolean {
    const given = url.searchParams.get('token') ?? String(req.headers['x-sob-token'] ?? '');
    const a = Buffer.from(given);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A page elsewhere that resolves its own name to 127.0.0.1 (DNS rebinding) is not this page.
    const host = String(req.headers.host ?? '');
    if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`)
      return this.send(res, 403, { error: 'wrong host' });
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${this.port}`);
    if (!this.tokenOk(url, req)) return this.send(res, 403, { error: 'missing or wrong token' });
    try {
      if (req.method === 'GET' && url.pathname === '/') {
        const nonce = randomBytes(16).toString('base64');
        res.setHeader('content-security-policy', reviewCsp(nonce));
        return this.send(res, 200, reviewPage(nonce), 'text/html; charset=utf-8');
      }
      if (req.method === 'GET' && url.pathname === '/api/state') return this.send(res, 200, this.state());
      if (req.method === 'GET' && url.pathname === '/api/record')
        return this.send(res, 200, this.recordView(url.searchParams.get('id') ?? ''));
      if (req.method === 'GET' && url.pathname === '/api/file')
        return this.file(res, url.searchParams.get('path') ?? '');
      if (req.method === 'POST' && url.pathname === '/api/decision') {
        const d = this.decide((await readBody(req)) as Record<string, unknown>);
        return this.send(res, 200, { ok: true, decision: brief(d), state: this.state() });
      }
      if (req.method === 'POST' && url.pathname === '/api/undo') {
        const undone = this.undo();
        return this.send(res, 200, { ok: true, undone: undone && brief(undone), state: this.state() });
      }
      return this.send(res, 404, { error: 'not found' });
    } catch (e) {
      if (e instanceof HttpError) return this.send(res, e.status, { error: e.message });
      if (e instanceof UserError) return this.send(res, 422, { error: e.message });
      throw e;
    }
  }

  /** Only images inside the evaluation folder. */
  private file(res: ServerResponse, rel: string): void {
    const real = insideFolder(this.evalDir, rel);
    if (!real) throw new HttpError(403, 'outside the evaluation folder');
    const type = IMAGE_TYPES[extname(real).toLowerCase()];
    if (!type || !statSync(real).isFile()) throw new HttpError(403, 'not an image');
    this.send(res, 200, readFileSync(real), type);
  }

  /** The flagged list, every reviewer's standing decisions, and where this reviewer resumes. */
  state() {
    const all = readDecisions(this.evalDir);
    const current = currentDecisions(all);
    const mineMap = current.get(this.reviewer) ?? new Map<string, Decision>();
    const show = (d: Decision) => ({
      reviewer: d.reviewer,
      decision: d.decision,
      after_text: d.decision === 'gold_right' || d.decision === 'drop' ? '' : jsonText(d.after ?? null),
      note: d.note,
      time: d.time,
    });
    const mine: Record<string, ReturnType<typeof show>> = Object.create(null);
    for (const [k, d] of mineMap) mine[k] = show(d);
    const others: Record<string, ReturnType<typeof show>[]> = Object.create(null);
    for (const [who, per] of current) {
      if (who === this.reviewer) continue;
      for (const [k, d] of per) (others[k] ??= []).push(show(d));
    }
    const dropped = [
      ...new Set([...mineMap.values()].filter((d) => d.decision === 'drop').map((d) => d.record_id)),
    ];
    return {
      reviewer: this.reviewer,
      models: this.review.data.models,
      items: this.review.items.map((it) => ({
        record_id: it.record_id,
        path: it.path,
        reasons: it.reasons.map((r) => ({ kind: r.kind, detail: r.detail, models: r.models })),
      })),
      mine,
      others,
      dropped,
      cursor: resumeAt(this.review.items, all, this.reviewer),
    };
  }

  recordView(id: string) {
    const r = this.byId.get(id);
    if (!r) throw new HttpError(404, `no record ${JSON.stringify(id)}`);
    const gold = [...flattenLeaves(r.gold)];
    const benchDir = this.review.data.benchmark ? dirname(this.review.data.benchmark) : this.evalDir;
    return {
      id: r.id,
      question: r.question,
      context: r.context,
      schema_text: JSON.stringify(r.schema, null, 2),
      gold_text: jsonText(r.gold),
      gold: gold.map(([path, v]) => ({ path, text: jsonText(v) })),
      models: r.answers.map((a) => {
        const leaves = flattenLeaves(a.candidate);
        return {
          model: a.model,
          parsed: a.candidate !== undefined,
          values: gold.map(([p]) => (leaves.has(p) ? jsonText(leaves.get(p)) : null)),
          same: gold.map(([p, g]) => sameLeaf(g, leaves.get(p))),
        };
      }),
      attachments: r.attachments.map((a) => {
        const abs = resolve(benchDir, a.path);
        const inside = insideFolder(this.evalDir, abs);
        const image = a.kind === 'image' && IMAGE_TYPES[extname(a.path).toLowerCase()] !== undefined;
        return {
          kind: a.kind,
          path: a.path,
          url: inside && image ? `/api/file?path=${encodeURIComponent(relative(this.evalDir, abs))}` : null,
          note: !image ? 'not an image' : inside ? '' : 'outside the evaluation folder: not served',
        };
      }),
    };
  }

  decide(body: Record<string, unknown>): Decision {
    if (typeof body !== 'object' || body === null) throw new HttpError(400, 'expected a JSON object');
    const { record_id: id, path, decision } = body;
    if (typeof id !== 'string' || typeof path !== 'string')
      throw new HttpError(400, 'record_id and path must be strings');
    if (!(DECISIONS as readonly unknown[]).includes(decision))
      throw new HttpError(400, `decision must be one of ${DECISIONS.join(', ')}`);
    const kind = decision as DecisionKind;
    const r = this.byId.get(id);
    if (!r) throw new HttpError(404, `no record ${JSON.stringify(id)}`);
    const before = valueAt(r.gold, path);
    if (before === undefined) throw new HttpError(400, `${id}: no gold leaf at ${path}`);
    const note = typeof body.note === 'string' ? body.note.slice(0, 2000) : '';
    const item = this.itemIndex.get(leafKey(id, path));
    const reason = item ? item.reasons.map((x) => `${x.kind}: ${x.detail}`).join('; ') : 'not flagged';
    let after: PyValue | null = null;
    let model: string | undefined;
    if (kind === 'gold_right') after = before;
    else if (kind === 'alternative') {
      if (path === '') throw new HttpError(400, 'an alternative is accepted for a leaf, not a whole record');
      model = typeof body.model === 'string' ? body.model : '';
      const a = r.answers.find((x) => x.model === model);
      const v = a?.candidate === undefined ? undefined : valueAt(a.candidate, path);
      if (v === undefined) throw new HttpError(400, `${model || '(no model)'} has no answer at ${path}`);
      if (pyEquals(v, before)) throw new HttpError(400, `${model}'s answer at ${path} is the gold already`);
      after = v;
    } else if (kind === 'gold_wrong') {
      if (typeof body.value !== 'string') throw new HttpError(400, 'gold_wrong needs the right value');
      after = typedValue(body.value);
      checkAgainstSchema(r, path, after);
    }
    return appendDecision(this.evalDir, {
      reviewer: this.reviewer,
      record_id: id,
      path,
      decision: kind,
      before: kind === 'drop' ? null : before,
      after,
      reason,
      note,
      ...(model === undefined ? {} : { model }),
    });
  }

  /** Takes back this reviewer's latest standing decision (appending an `undo`). */
  undo(): Decision | null {
    const mine = activeDecisions(readDecisions(this.evalDir)).filter((d) => d.reviewer === this.reviewer);
    const last = mine.at(-1);
    if (!last) return null;
    appendDecision(this.evalDir, {
      reviewer: this.reviewer,
      record_id: last.record_id,
      path: last.path,
      decision: 'undo',
      before: null,
      after: null,
      reason: `undo ${last.decision}`,
      note: '',
      undoes: last.id,
    });
    return last;
  }
}

/** A decision as the page reads it (values as JSON text: an int lexeme is a bigint here). */
function brief(d: Decision) {
  return {
    id: d.id,
    reviewer: d.reviewer,
    record_id: d.record_id,
    path: d.path,
    decision: d.decision,
    after_text: jsonText(d.after ?? null),
  };
}

/** What the reviewer typed: JSON when it parses (numbers keep their lexeme), else the text as a string. */
export function typedValue(text: string): PyValue {
  try {
    return parsePyJson(text.trim());
  } catch {
    return text;
  }
}

/**
 * The gold with the typed value must pass the record's schema; when the gold failed it already,
 * the typed value must at least not be what fails.
 */
export function checkAgainstSchema(r: LoadedRecord, path: string, value: PyValue): void {
  if (r.schema === null || typeof r.schema !== 'object') return;
  const next = validateInstance(r.schema as object, toPlain(withLeaf(r.gold, path, value)));
  if (next.valid) return;
  const was = validateInstance(r.schema as object, toPlain(r.gold));
  if (!was.valid && was.reason === next.reason) return;
  throw new UserError(`${jsonText(value)} at ${path || '(record)'} fails the schema: ${next.reason}`);
}

/** Where a reviewer resumes: after the flagged leaf of their latest standing decision. */
export function resumeAt(items: readonly FlagItem[], all: readonly Decision[], reviewer: string): number {
  if (items.length === 0) return 0;
  const mine = activeDecisions(all).filter((d) => d.reviewer === reviewer);
  const dropped = new Set(mine.filter((d) => d.decision === 'drop').map((d) => d.record_id));
  const last = mine.at(-1);
  let i = last ? items.findIndex((it) => it.record_id === last.record_id && it.path === last.path) + 1 : 0;
  while (i < items.length && dropped.has(items[i].record_id)) i++;
  return Math.min(i, items.length - 1);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 1 << 20) throw new HttpError(413, 'request too large');
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'not JSON');
  }
}

/** Runs the page until the process is stopped; prints its URL (with the token) on stdout. */
export async function serveReview(s: ReviewSettings, log: (m: string) => void): Promise<ReviewServer> {
  const review = prepareReview(s);
  const server = new ReviewServer(review, s.reviewer);
  const url = await server.listen(s.port ?? 0);
  log(
    `sob review: ${review.items.length} flagged leaves over ${review.data.records.length} records and ${review.data.models.length} models; reviewer ${s.reviewer}; decisions -> ${resolve(s.evalDir, 'review', 'decisions.jsonl')}`,
  );
  process.stdout.write(`${url}\n`);
  return server;
}

/** What `sob review` was asked: serve the page, list the flags, apply the decisions, or compare reviewers. */
export interface ReviewCommand extends ReviewSettings {
  mode: 'serve' | 'list' | 'apply' | 'agreement';
  out?: string;
}

/** `sob review` as one call: the mode picks what it does. */
export async function reviewCommand(s: ReviewCommand, log: (m: string) => void): Promise<void> {
  if (s.mode === 'agreement') {
    const { agreementText } = await import('./review-apply.ts');
    process.stdout.write(agreementText(s.evalDir));
    return;
  }
  if (s.mode === 'apply') {
    const { applyReview } = await import('./review-apply.ts');
    const r = await applyReview({ evalDir: s.evalDir, benchmark: s.benchmark, out: s.out });
    process.stdout.write(
      `gold v${r.version}: ${r.records}\n  ${r.kept} records kept, ${r.dropped.length} dropped, ${r.changed} gold values changed, ${r.alternatives} alternatives accepted, ${r.confirmed} confirmed\n  score the same answers against it: sob score <answers> --benchmark ${r.records}\n`,
    );
    return;
  }
  const review = prepareReview(s);
  if (s.mode === 'list') {
    const counts = new Map<string, number>();
    for (const it of review.items) {
      for (const k of new Set(it.reasons.map((r) => r.kind))) counts.set(k, (counts.get(k) ?? 0) + 1);
      process.stdout.write(
        `${it.record_id}\t${it.path || '(record)'}\t${it.reasons.map((r) => `${r.kind}: ${r.detail}`).join('; ')}\n`,
      );
    }
    log(
      `${review.items.length} flagged over ${review.data.records.length} records and ${review.data.models.length} models${counts.size ? ` (${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`,
    );
    return;
  }
  const server = await serveReview(s, log);
  await new Promise<void>((done) => {
    const stop = () => void server.close().then(done);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
