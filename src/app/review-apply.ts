/**
 * `sob review --apply` and `sob review --agreement` (docs/review.md): the reviewers' decisions
 * become a new benchmark version beside the old one (the old never touched), and two
 * reviewers' decisions on the same leaves are compared with judges/agreement.ts.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { cohensKappa } from '../../judges/agreement.ts';
import { makeManifest, readManifest, totalsOfFile, writeManifest } from '../../sources/manifest.ts';
import { UserError } from '../core/errors.ts';
import { writeFileAtomic } from '../core/files.ts';
import { readLinesSync } from '../core/jsonl.ts';
import { dumpsPy, type PyObject, type PyValue, parsePyJson } from '../core/pyjson.ts';
import {
  currentDecisions,
  type Decision,
  decisionsFile,
  jsonText,
  loadReviewData,
  readDecisions,
  sha256File,
  withLeaf,
} from './review-data.ts';

/** One change the new version makes, as its manifest lists it. */
export interface GoldChange {
  record_id: string;
  path: string;
  decision: Decision['decision'];
  before: PyValue | null;
  after: PyValue | null;
  reviewer: string;
  time: string;
  note: string;
  reason: string;
  decision_id: string;
  model?: string;
  /** Other reviewers' standing decisions on the same leaf that differ (the latest one was applied). */
  overruled?: { reviewer: string; decision: string; after: PyValue | null; decision_id: string }[];
}

/**
 * Per leaf, the decision applied: the latest standing one of any reviewer; the others that
 * differ from it are named beside it.
 */
export function chosenDecisions(all: readonly Decision[]): GoldChange[] {
  const byLeaf = new Map<string, Decision[]>();
  for (const per of currentDecisions(all).values())
    for (const [k, d] of per) byLeaf.set(k, [...(byLeaf.get(k) ?? []), d]);
  const order = new Map(all.map((d, i) => [d.id, i]));
  const out: GoldChange[] = [];
  for (const ds of byLeaf.values()) {
    ds.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    const d = ds.at(-1)!;
    const differ = ds.filter(
      (o) =>
        o !== d && (o.decision !== d.decision || jsonText(o.after ?? null) !== jsonText(d.after ?? null)),
    );
    out.push({
      record_id: d.record_id,
      path: d.path,
      decision: d.decision,
      before: d.before,
      after: d.after,
      reviewer: d.reviewer,
      time: d.time,
      note: d.note,
      reason: d.reason,
      decision_id: d.id,
      ...(d.model === undefined ? {} : { model: d.model }),
      ...(differ.length
        ? {
            overruled: differ.map((o) => ({
              reviewer: o.reviewer,
              decision: o.decision,
              after: o.after,
              decision_id: o.id,
            })),
          }
        : {}),
    });
  }
  return out.sort((a, b) => order.get(a.decision_id)! - order.get(b.decision_id)!);
}

export interface ApplyResult {
  dir: string;
  records: string;
  version: number;
  kept: number;
  dropped: string[];
  changed: number;
  alternatives: number;
  confirmed: number;
}

const LINE = { ensureAscii: false, separators: [',', ':'] as [string, string] };

/** Writes the new benchmark version; returns where and what changed. */
export async function applyReview(s: {
  evalDir: string;
  benchmark?: string;
  out?: string;
}): Promise<ApplyResult> {
  const data = loadReviewData(s.evalDir, { benchmark: s.benchmark });
  const bench = data.benchmark;
  if (!bench) throw new UserError(`${s.evalDir}: no benchmark known (give --benchmark <records.jsonl>)`);
  const all = readDecisions(data.evalDir);
  if (all.length === 0) throw new UserError(`${decisionsFile(data.evalDir)}: no decisions to apply`);
  const changes = chosenDecisions(all);
  const oldManifest = readManifest(bench);
  const oldVersion = Number(oldManifest?.gold?.version ?? 1);
  const version = oldVersion + 1;
  const benchDir = dirname(bench);
  const dir = resolve(
    s.out ?? join(dirname(benchDir), `${basename(benchDir).replace(/-gold-v\d+$/, '')}-gold-v${version}`),
  );
  if (existsSync(dir))
    throw new UserError(`${dir} exists already: the new version goes to a new folder (--out)`);
  const byRecord = new Map<string, GoldChange[]>();
  for (const c of changes) byRecord.set(c.record_id, [...(byRecord.get(c.record_id) ?? []), c]);
  const dropped: string[] = [];
  const lines: string[] = [];
  const copies = new Set<string>();
  let kept = 0;
  for (const l of readLinesSync(bench)) {
    if (l.text.trim() === '') continue;
    const rec = parsePyJson(l.text) as PyObject;
    const md = rec.get('metadata') as PyObject;
    const id = md.get('record_id') as string;
    const cs = byRecord.get(id) ?? [];
    if (cs.some((c) => c.decision === 'drop')) {
      dropped.push(id);
      continue;
    }
    const output = new Map(rec.get('output') as PyObject);
    let gold = output.get('ground_truth') ?? null;
    const meta = new Map(md);
    const alts = new Map((meta.get('accepted_alternatives') as PyObject | undefined) ?? []);
    for (const c of cs) {
      if (c.decision === 'gold_wrong') gold = withLeaf(gold, c.path, c.after ?? null);
      else if (c.decision === 'alternative') {
        const had = (alts.get(c.path) as PyValue[] | undefined) ?? [];
        if (!had.some((v) => jsonText(v) === jsonText(c.after ?? null)))
          alts.set(c.path, [...had, c.after ?? null]);
      }
    }
    output.set('ground_truth', gold);
    if (alts.size > 0) meta.set('accepted_alternatives', alts);
    meta.set('gold_version', BigInt(version));
    const out = new Map(rec);
    out.set('metadata', meta);
    out.set('output', output);
    lines.push(dumpsPy(out, LINE));
    kept++;
    const input = rec.get('input');
    const atts = input instanceof Map ? input.get('attachments') : undefined;
    if (Array.isArray(atts))
      for (const a of atts) {
        const p = a instanceof Map ? a.get('path') : undefined;
        if (typeof p === 'string' && !isAbsolute(p)) copies.add(p);
      }
  }
  mkdirSync(dir, { recursive: true });
  for (const p of copies) {
    const from = resolve(benchDir, p);
    const to = resolve(dir, p);
    if (!to.startsWith(dir + sep) || !existsSync(from)) continue;
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
  const records = join(dir, basename(bench));
  writeFileAtomic(records, lines.length ? `${lines.join('\n')}\n` : '');
  const { totals, uncounted } = await totalsOfFile(records);
  const manifest = makeManifest(totals, basename(records), uncounted);
  manifest.gold = {
    version,
    previous: {
      benchmark: relative(dir, bench),
      sha256: sha256File(bench),
      version: oldVersion,
    },
    decisions: relative(dir, decisionsFile(data.evalDir)),
    decisions_sha256: sha256File(decisionsFile(data.evalDir)),
    changes: JSON.parse(jsonText(changes as unknown as PyValue)) as unknown[],
  };
  writeManifest(records, manifest);
  return {
    dir,
    records,
    version,
    kept,
    dropped,
    changed: changes.filter((c) => c.decision === 'gold_wrong' && !dropped.includes(c.record_id)).length,
    alternatives: changes.filter((c) => c.decision === 'alternative' && !dropped.includes(c.record_id))
      .length,
    confirmed: changes.filter((c) => c.decision === 'gold_right').length,
  };
}

export interface PairAgreement {
  a: string;
  b: string;
  /** Leaves both decided. */
  shared: number;
  /** Share of them where both took the same decision (and, for a typed or accepted value, the same value). */
  agreement: number;
  /** Cohen's kappa of "the gold stands as it is" (gold right) against any change, on the shared leaves. */
  kappa: number;
  disagreements: { record_id: string; path: string; a: string; b: string }[];
}

const label = (d: Decision) =>
  d.decision === 'gold_wrong' || d.decision === 'alternative'
    ? `${d.decision} ${jsonText(d.after ?? null)}`
    : d.decision;

/** Agreement of every pair of reviewers over the leaves both decided (their standing decisions). */
export function reviewAgreement(all: readonly Decision[]): PairAgreement[] {
  const cur = currentDecisions(all);
  const names = [...cur.keys()].sort();
  const out: PairAgreement[] = [];
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++) {
      const A = cur.get(names[i])!;
      const B = cur.get(names[j])!;
      const xa: boolean[] = [];
      const xb: boolean[] = [];
      let same = 0;
      const disagreements: PairAgreement['disagreements'] = [];
      for (const [k, da] of A) {
        const db = B.get(k);
        if (!db) continue;
        xa.push(da.decision === 'gold_right');
        xb.push(db.decision === 'gold_right');
        if (label(da) === label(db)) same++;
        else disagreements.push({ record_id: da.record_id, path: da.path, a: label(da), b: label(db) });
      }
      out.push({
        a: names[i],
        b: names[j],
        shared: xa.length,
        agreement: xa.length ? same / xa.length : Number.NaN,
        kappa: cohensKappa(xa, xb),
        disagreements,
      });
    }
  return out;
}

/** `sob review --agreement`: one block per pair of reviewers. */
export function agreementText(evalDir: string): string {
  const all = readDecisions(resolve(evalDir));
  const pairs = reviewAgreement(all);
  if (pairs.length === 0) return 'fewer than two reviewers have decided: no agreement to report\n';
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
  const out: string[] = [];
  for (const p of pairs) {
    out.push(
      `${p.a} vs ${p.b}: ${p.shared} leaves both decided; same decision ${f(p.agreement)}; Cohen's kappa (gold right vs changed) ${f(p.kappa)}`,
    );
    for (const d of p.disagreements)
      out.push(`  ${d.record_id} ${d.path || '(record)'}: ${p.a} ${d.a} | ${p.b} ${d.b}`);
  }
  return `${out.join('\n')}\n`;
}
