/**
 * Short, distinct model names for narrow places (the pairwise matrix's column headers). Cutting
 * every name at 12 characters made "Claude-Opus-4.6" and "Claude-Opus-4.7" the same column;
 * here a name is shortened by its parts: words without digits (other than the first) become
 * their initial ("Claude-O-4.6"), then the first word is cut, then the middle of the name;
 * names that still collide get the smallest middle cut that tells them apart, else a number.
 */

const SEP = /([-_ /])/;

function hasDigit(s: string): boolean {
  return /\d/.test(s);
}

/** Shortens one name to at most `max` characters, keeping its version-like parts. */
export function shortName(name: string, max: number): string {
  if (name.length <= max) return name;
  const parts = name.split(SEP); // words at even indexes, separators at odd ones
  const words = parts.map((_, i) => i % 2 === 0);
  const len = () => parts.reduce((n, p) => n + p.length, 0);
  // 1. Words without digits, except the first, to their initial: longest first.
  const alpha = parts
    .map((p, i) => [p, i] as const)
    .filter(([p, i]) => words[i] && i > 0 && p.length > 1 && !hasDigit(p))
    .sort((a, b) => b[0].length - a[0].length || b[1] - a[1]);
  for (const [, i] of alpha) {
    if (len() <= max) break;
    parts[i] = parts[i][0];
  }
  // 2. The first word cut, down to 3 characters.
  if (len() > max && parts[0].length > 3)
    parts[0] = parts[0].slice(0, Math.max(3, parts[0].length - (len() - max)));
  const s = parts.join('');
  return s.length <= max ? s : middleCut(name, max, 4);
}

/** The first and last characters with an ellipsis between: `tail` characters kept at the end. */
function middleCut(name: string, max: number, tail: number): string {
  if (name.length <= max) return name;
  const t = Math.min(tail, max - 2);
  return `${name.slice(0, max - 1 - t)}…${name.slice(name.length - t)}`;
}

/** One short name per name, all distinct (distinct inputs or not), each at most `max` characters. */
export function shortNames(names: string[], max = 12): string[] {
  const out = names.map((n) => shortName(n, max));
  const taken = () => {
    const count = new Map<string, number>();
    for (const s of out) count.set(s, (count.get(s) ?? 0) + 1);
    return count;
  };
  let count = taken();
  const groups = new Map<string, number[]>();
  out.forEach((s, i) => {
    if ((count.get(s) ?? 0) > 1) groups.set(s, [...(groups.get(s) ?? []), i]);
  });
  for (const idx of groups.values()) {
    // The smallest tail (from 3 characters up) whose middle cuts tell the group apart.
    let solved = false;
    for (let tail = 3; tail <= max - 2 && !solved; tail++) {
      const cand = idx.map((i) => middleCut(names[i], max, tail));
      const others = new Set(out.filter((_, k) => !idx.includes(k)));
      if (new Set(cand).size === cand.length && cand.every((c) => !others.has(c))) {
        idx.forEach((i, k) => {
          out[i] = cand[k];
        });
        solved = true;
      }
    }
    if (solved) continue;
    // Same names (or too alike): numbered, the first one kept.
    idx.slice(1).forEach((i, k) => {
      const mark = `~${k + 2}`;
      out[i] = `${out[i].slice(0, max - mark.length)}${mark}`;
    });
    count = taken();
  }
  return out;
}
