/**
 * Words -> lines -> segments (pure; no I/O). A segment is a run of words on one line with no
 * wide gap inside: a column's line, a table cell, a heading. Everything after this step (running
 * heads, tables, reading order) works on segments.
 *
 * - Lines: boxes sharing a `lineId` (OCR lines), else boxes whose baselines agree (small caps
 *   and mixed sizes on one baseline stay one line); then small raised or lowered pieces beside a
 *   line (superscripts, footnote marks, "th" in "28th") join it.
 * - Segments: a line split where the gap between words is wider than about one font size
 *   (`SPLIT_EM`); a list label ("a)", "3.", "(iv)", "•") alone before its text is joined to it,
 *   so hanging labels do not form a column of their own.
 * - Words: spaces from gaps; letter-spaced titles ("A n n u a l") read as words; TeX spacing
 *   accents and doubled quotes composed.
 */

export interface TextBox {
  /** No surrounding whitespace. */
  text: string;
  /** PDF points, origin top left. */
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** Font size in points. */
  size: number;
  /** Boxes known to share a line (OCR output); otherwise lines are found from geometry. */
  lineId?: number;
  /** Set in a bold face (text layer only). */
  bold?: boolean;
  /** A raised mark joined to the word before it (no space). */
  sup?: boolean;
  /** Its place in the page's content stream (text layer only): the order the PDF draws its text in. */
  seq?: number;
}

const SUPERSCRIPT_DIGITS = '⁰¹²³⁴⁵⁶⁷⁸⁹';

function superscript(digits: string): string {
  return [...digits].map((d) => SUPERSCRIPT_DIGITS[Number(d)]).join('');
}

export interface Segment {
  boxes: TextBox[];
  text: string;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** Median font size of its boxes. */
  size: number;
  /** The line it was cut from (segments of one line share it). */
  line: number;
  /** Most of its characters are set in a bold face. */
  bold: boolean;
  /** The earliest content-stream place of its boxes (`TextBox.seq`); undefined for OCR'd text. */
  seq?: number;
}

/** A gap wider than this many font sizes splits a line into segments. */
export const SPLIT_EM = 1.0;

export function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Body font size: the size most characters are set in. */
export function bodySize(boxes: TextBox[]): number {
  const weight = new Map<number, number>();
  for (const b of boxes) {
    const k = Math.round(b.size * 2) / 2;
    weight.set(k, (weight.get(k) ?? 0) + b.text.length);
  }
  let best = 10;
  let bestW = -1;
  for (const [k, w] of weight) {
    if (w > bestW) {
      best = k;
      bestW = w;
    }
  }
  return best;
}

/** Two single quotes set as a double quote (TeX's `` and '') read as one. */
function fixQuotes(s: string): string {
  return s.replace(/\u2018\u2018|``/g, '\u201c').replace(/\u2019\u2019/g, '\u201d');
}

// Spacing accents TeX sets before a letter (J´an Min´aˇc) and the combining marks they stand for.
const SPACING_ACCENTS: Record<string, string> = {
  '\u00b4': '\u0301',
  '`': '\u0300',
  '\u02c6': '\u0302',
  '\u02dc': '\u0303',
  '\u00a8': '\u0308',
  '\u02c7': '\u030c',
  '\u02d8': '\u0306',
  '\u02d9': '\u0307',
  '\u00b8': '\u0327',
  '\u02da': '\u030a',
  '\u02dd': '\u030b',
  '\u02db': '\u0328',
};

/** `´a` -> `á`: a spacing accent glued to the letter after it (no space), composed. */
export function composeAccents(s: string): string {
  return s
    .replace(
      /([\u00b4`\u02c6\u02dc\u00a8\u02c7\u02d8\u02d9\u00b8\u02da\u02dd\u02db]) ?(\p{L})/gu,
      // TeX accents a dotless i or j (\'{\i}): the dot goes back when the accent is composed.
      (_m, acc: string, letter: string) =>
        `${letter === '\u0131' ? 'i' : letter === '\u0237' ? 'j' : letter}${SPACING_ACCENTS[acc]}`,
    )
    .normalize('NFC');
}

/**
 * Boxes of one segment (left to right) as text: a space where the gap is wider than 0.12 em.
 * Letter-spaced text (most boxes one character, "A n n u a l  R e p o r t") keeps a space only
 * where the gap is clearly wider than its letter spacing.
 */
export function joinBoxes(boxes: TextBox[]): string {
  const singles = boxes.filter((b) => [...b.text].length === 1).length;
  let wordGap = (size: number) => 0.12 * size;
  if (boxes.length >= 4 && singles >= 0.7 * boxes.length) {
    const gaps: number[] = [];
    for (let i = 1; i < boxes.length; i++) gaps.push(boxes[i].x0 - boxes[i - 1].x1);
    const letter = median(gaps);
    wordGap = (size: number) => Math.max(0.12 * size, Math.min(1.8 * letter + 0.05 * size, 0.6 * size));
  }
  let s = '';
  let prev: TextBox | undefined;
  for (const b of boxes) {
    if (prev && !b.sup) {
      const gap = b.x0 - prev.x1;
      if (gap > wordGap(Math.min(prev.size, b.size))) s += ' ';
    }
    s += b.text;
    prev = b;
  }
  // Accounting negatives set with a hanging parenthesis ("(45,811 )") read "(45,811)".
  return composeAccents(fixQuotes(s.replace(/\s+/g, ' ').replace(/(\(\s?[\d.,]*\d) \)/g, '$1)')));
}

export function makeSegment(boxes: TextBox[], line: number): Segment {
  let x0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let top = Number.POSITIVE_INFINITY;
  let bottom = Number.NEGATIVE_INFINITY;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x0);
    x1 = Math.max(x1, b.x1);
    top = Math.min(top, b.top);
    bottom = Math.max(bottom, b.bottom);
  }
  // The size of a segment is its text's, not its footnote marks': weight by characters.
  const chars = boxes.reduce((n, b) => n + b.text.length, 0);
  const boldChars = boxes.reduce((n, b) => n + (b.bold ? b.text.length : 0), 0);
  let seq: number | undefined;
  for (const b of boxes) if (b.seq !== undefined && (seq === undefined || b.seq < seq)) seq = b.seq;
  return {
    ...(seq !== undefined ? { seq } : {}),
    boxes,
    text: joinBoxes(boxes),
    x0,
    x1,
    top,
    bottom,
    size: bodySize(boxes),
    line,
    bold: boldChars > chars / 2,
  };
}

/**
 * A drop cap (one or two letters set far larger than the text, beside the paragraph's first
 * lines) is glued to the first word on its right, so "O" + "ver the" reads "Over the".
 */
export function mergeDropCaps(boxes: TextBox[], body: number): TextBox[] {
  const out = [...boxes];
  for (const cap of boxes) {
    if (cap.text.length > 2 || cap.size < 2.2 * body || !/^\p{Lu}+$/u.test(cap.text)) continue;
    let best: TextBox | undefined;
    for (const b of out) {
      if (b === cap || b.size > 1.5 * body) continue;
      const dx = b.x0 - cap.x1;
      if (dx < -0.5 * body || dx > 2 * body) continue;
      if (b.top < cap.top - body || b.top > cap.top + 0.5 * (cap.bottom - cap.top)) continue;
      if (!best || b.top < best.top || (b.top === best.top && b.x0 < best.x0)) best = b;
    }
    if (!best) continue;
    const i = out.indexOf(best);
    out[i] = { ...best, text: cap.text + best.text, x0: Math.min(cap.x0, best.x0) };
    out.splice(out.indexOf(cap), 1);
  }
  return out;
}

interface Line {
  boxes: TextBox[];
  baseline: number;
  size: number;
  top: number;
  bottom: number;
  x0: number;
  x1: number;
}

function lineOf(boxes: TextBox[]): Line {
  const size = median(boxes.map((b) => b.size));
  return {
    boxes,
    size,
    baseline: median(boxes.map((b) => b.bottom - 0.2 * b.size)),
    top: Math.min(...boxes.map((b) => b.top)),
    bottom: Math.max(...boxes.map((b) => b.bottom)),
    x0: Math.min(...boxes.map((b) => b.x0)),
    x1: Math.max(...boxes.map((b) => b.x1)),
  };
}

/**
 * Groups boxes into lines. OCR boxes keep their engine's lines. Other boxes join the line whose
 * baseline is within a third of the smaller size (so small caps and a bold word on one baseline
 * stay together, while the next line never joins). Then a short line of smaller type that
 * overlaps a larger line vertically and touches it horizontally (a superscript, a footnote mark)
 * joins that line.
 */
export function groupLines(boxes: TextBox[]): TextBox[][] {
  const withId = new Map<number, TextBox[]>();
  const free: TextBox[] = [];
  for (const b of boxes) {
    if (b.lineId !== undefined) {
      const l = withId.get(b.lineId);
      if (l) l.push(b);
      else withId.set(b.lineId, [b]);
    } else free.push(b);
  }
  const baseline = (b: TextBox) => b.bottom - 0.2 * b.size;
  free.sort((a, b) => baseline(a) - baseline(b));
  const open: { boxes: TextBox[]; baseline: number; size: number }[] = [];
  const lines: TextBox[][] = [];
  for (const b of free) {
    const bl = baseline(b);
    let best: (typeof open)[number] | undefined;
    let bestD = Number.POSITIVE_INFINITY;
    for (let i = open.length - 1; i >= 0 && i >= open.length - 16; i--) {
      const l = open[i];
      const d = Math.abs(bl - l.baseline);
      if (d <= 0.3 * Math.min(b.size, l.size) && d < bestD) {
        best = l;
        bestD = d;
      }
    }
    if (best) best.boxes.push(b);
    else {
      const l = { boxes: [b], baseline: bl, size: b.size };
      open.push(l);
      lines.push(l.boxes);
    }
  }
  const all = [...withId.values(), ...lines].map(lineOf);
  // Attach small raised/lowered pieces to the larger line they sit against.
  const absorbed = new Set<Line>();
  const bySize = [...all].sort((a, b) => a.size - b.size);
  for (const small of bySize) {
    if (small.boxes.length > 3 || small.boxes.some((b) => [...b.text].length > 4)) continue;
    let host: Line | undefined;
    for (const big of all) {
      if (big === small || absorbed.has(big) || big.size < 1.15 * small.size) continue;
      const overlap = Math.min(small.bottom, big.bottom) - Math.max(small.top, big.top);
      if (overlap < 0.4 * (small.bottom - small.top)) continue;
      const touches = big.boxes.some(
        (b) => small.x0 - b.x1 < 0.4 * big.size && b.x0 - small.x1 < 0.4 * big.size,
      );
      if (touches && (!host || big.size > host.size)) host = big;
    }
    if (host) {
      // Raised digits are a footnote or note mark: written as superscript digits ("Bonuses²").
      const raised = small.baseline < host.baseline - 0.25 * host.size;
      for (const b of small.boxes)
        host.boxes.push(
          raised && /^\d{1,3}$/.test(b.text) ? { ...b, text: superscript(b.text), sup: true } : b,
        );
      absorbed.add(small);
    }
  }
  return all.filter((l) => !absorbed.has(l)).map((l) => l.boxes);
}

/** List labels and footnote marks that hang before their text: "a)", "(iv)", "3.", "12.1", "•", "*", "†". */
const LABEL =
  /^(?:\(?(?:\d{1,3}|[a-zA-Z]|[ivxlcdmIVXLCDM]{1,6})[.)]|\(\d{1,3}\)|\d{1,3}(?:\.\d{1,3}){1,3}\.?|[•·▪■●◦○►▶✓➢]|\*{1,3}|[†‡]{1,2})$/u;

const CURRENCY = /^(?:[A-Z]{0,3}[$\u20ac\u00a3\u00a5\u20b9]|Rs\.?|RMB)$/;

export function isListLabel(s: string): boolean {
  return LABEL.test(s);
}

/**
 * Lines -> segments: each line (left to right) split at gaps wider than `SPLIT_EM` font sizes;
 * then a list label followed on its line by text within six font sizes is joined to that text.
 */
export function toSegments(lines: TextBox[][]): Segment[] {
  const segs: Segment[] = [];
  lines.forEach((line, lineNo) => {
    line.sort((a, b) => a.x0 - b.x0);
    const parts: TextBox[][] = [];
    let cur: TextBox[] = [];
    let right = Number.NEGATIVE_INFINITY;
    const dotsOnly = (b: TextBox) => !/[^.\u2026\u00b7\s]/.test(b.text);
    const hasText = line.some((b) => !dotsOnly(b));
    for (const b of line) {
      // Dot leaders beside text separate a label from its value: a cut, never text.
      if (hasText && dotsOnly(b)) {
        if (cur.length > 0) parts.push(cur);
        cur = [];
        continue;
      }
      const size = Math.max(b.size, cur.length ? median(cur.map((c) => c.size)) : b.size);
      const gap = b.x0 - right;
      // A word cut in two pieces by loose kerning ("Product" "s:"): a short piece, letters on both sides.
      const prevText = cur[cur.length - 1]?.text ?? '';
      const continues =
        gap < 1.6 * size &&
        /\p{L}$/u.test(prevText) &&
        /^\p{Ll}/u.test(b.text) &&
        Math.min([...prevText].length, [...b.text].length) <= 2;
      // A currency sign after an amount opens the next amount ("$ 11,642 $ 10,560").
      const opens = CURRENCY.test(b.text) && /[\d)]$/.test(prevText) && gap > 0.2 * size;
      if (cur.length > 0 && ((gap > SPLIT_EM * size && !continues) || opens)) {
        parts.push(cur);
        cur = [];
      }
      cur.push(b);
      right = Math.max(right, b.x1);
    }
    if (cur.length > 0) parts.push(cur);
    const made = parts.map((p) => makeSegment(p, lineNo));
    for (let i = 0; i < made.length; i++) {
      const s = made[i];
      const next = made[i + 1];
      // A currency sign set apart from its amount ("$   1,234") belongs to it.
      if (
        next &&
        CURRENCY.test(s.text) &&
        /^[(\-\u2013\u2014]?\d/.test(next.text) &&
        next.x0 - s.x1 <= 8 * s.size
      ) {
        made[i + 1] = makeSegment([...s.boxes, ...next.boxes], lineNo);
        continue;
      }
      // Only before words: "12.1" before "3.4" is two table cells, not a label.
      if (
        next &&
        isListLabel(s.text) &&
        /^["'(\u2018\u201c]?\p{L}/u.test(next.text) &&
        next.x0 - s.x1 <= 6 * s.size
      ) {
        made[i + 1] = makeSegment([...s.boxes, ...next.boxes], lineNo);
        continue;
      }
      segs.push(s);
    }
  });
  return segs;
}

const LEADER = /(?:\s*[.\u2026\u00b7]){4,}\s*/g;

/**
 * Dot leaders ("Total ........ 1,234") are layout, not text: they are cut out of a box, and
 * what stands on either side becomes its own box (positions shared out by characters), so the
 * label and the value are two cells.
 */
export function splitLeaders(b: TextBox): TextBox[] {
  // A box of dots alone is a dotted rule: it stays (it separates what is above from below).
  if (!/(?:\s*[.\u2026\u00b7]){4,}/.test(b.text) || !/[^.\u2026\u00b7\s]/.test(b.text)) return [b];
  const chars = [...b.text];
  const per = (b.x1 - b.x0) / Math.max(1, chars.length);
  const out: TextBox[] = [];
  let last = 0;
  const push = (from: number, to: number) => {
    const piece = chars.slice(from, to).join('');
    const lead = piece.length - piece.trimStart().length;
    const text = piece.trim();
    if (text === '') return;
    const start = from + [...piece.slice(0, lead)].length;
    out.push({ ...b, text, x0: b.x0 + start * per, x1: b.x0 + (start + [...text].length) * per });
  };
  const str = chars.join('');
  for (const m of str.matchAll(LEADER)) {
    const from = [...str.slice(0, m.index)].length;
    push(last, from);
    last = from + [...m[0]].length;
  }
  push(last, chars.length);
  return out;
}

/** Boxes -> segments, with dot leaders cut out and drop caps merged. */
export function buildSegments(boxes: TextBox[], body: number): Segment[] {
  return toSegments(groupLines(mergeDropCaps(boxes.flatMap(splitLeaders), body)).map(mergeCombs));
}

/**
 * Comb fields (a form's boxes, one character each: "0 1 2 2 6 7", "N I L") read as one word: a
 * run of three or more single letters or digits of one size on a line, at a steady pitch (each
 * step within a fifth of the run's first, measured between left edges or between centres) of at
 * most 2.2 font sizes, is one box. Table columns
 * of one-digit values stand further apart than that.
 */
export function mergeCombs(line: TextBox[]): TextBox[] {
  const sorted = [...line].sort((a, b) => a.x0 - b.x0);
  const out: TextBox[] = [];
  const single = (b: TextBox) => /^[\p{L}\p{N}]$/u.test(b.text);
  let i = 0;
  while (i < sorted.length) {
    let j = i + 1;
    if (single(sorted[i])) {
      const size = sorted[i].size;
      // Characters sit at the left of their cells or at their centres: either pitch is steady.
      const left = (a: TextBox, b: TextBox) => b.x0 - a.x0;
      const centre = (a: TextBox, b: TextBox) => (b.x0 + b.x1) / 2 - (a.x0 + a.x1) / 2;
      const steady = (pitch: typeof left, k: number) => {
        const first = pitch(sorted[i], sorted[i + 1]);
        return (
          first > 0 && first <= 2.2 * size && Math.abs(pitch(sorted[k - 1], sorted[k]) - first) <= 0.2 * first
        );
      };
      while (
        j < sorted.length &&
        single(sorted[j]) &&
        Math.abs(sorted[j].size - size) <= 0.05 * size &&
        sorted[j].x0 >= sorted[j - 1].x1 - 0.05 * size &&
        (steady(left, j) || steady(centre, j))
      )
        j++;
    }
    if (j - i >= 3) {
      const run = sorted.slice(i, j);
      out.push({ ...run[0], text: run.map((b) => b.text).join(''), x1: run[run.length - 1].x1 });
      i = j;
    } else {
      out.push(sorted[i]);
      i++;
    }
  }
  return out;
}

/** Rows of segments: segments whose vertical centres are close, each row sorted left to right. */
export function rowsOf(segs: Segment[]): Segment[][] {
  const sorted = [...segs].sort((a, b) => a.top + a.bottom - (b.top + b.bottom));
  const rows: Segment[][] = [];
  for (const s of sorted) {
    const r = rows[rows.length - 1];
    const c = (s.top + s.bottom) / 2;
    if (r) {
      const rc = median(r.map((x) => (x.top + x.bottom) / 2));
      if (Math.abs(c - rc) < 0.45 * Math.max(s.size, median(r.map((x) => x.size)))) {
        r.push(s);
        continue;
      }
    }
    rows.push([s]);
  }
  for (const r of rows) r.sort((a, b) => a.x0 - b.x0);
  return rows;
}
