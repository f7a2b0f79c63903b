/**
 * Python `re` patterns in a JavaScript evaluator.
 *
 * The SOB reference checks schemas with jsonschema's `Draft7Validator.check_schema`, which asserts
 * `format: "regex"` by calling `re.compile` (Python 3.11), and then validates answers with
 * `re.search(pattern, value)`. Ajv runs JavaScript RegExps, whose grammar and semantics differ
 * (`$`, `\d`, `\w`, `\s`, `\b`, `(?P<n>...)`, `{,n}`, `(?i)`...). This module gives both halves:
 *
 * - `pythonRegexError(pattern)`: null when `re.compile(pattern)` succeeds, else Python's message.
 *   A recursive-descent port of CPython 3.11's `re/_parser.py` (same token stream, same checks in
 *   the same order, same positions) plus the few checks `re/_compiler.py` makes (fixed-width
 *   look-behind, the template flag).
 * - `translatePythonRegex(pattern)`: an equivalent JS RegExp source and flags, or null when a
 *   construct has no faithful JS form (atomic groups, possessive repeats, conditionals, scoped
 *   flags, `\N{...}`, `(?t)`, back-references we cannot prove safe).
 *
 * Translation principles:
 * - Python flags are compiled away: `(?i)` expands characters into their case-insensitive class
 *   with Python's own rules (simple lowercase + `re/_casefix.py`), `(?m)`, `(?s)` and `(?x)`
 *   rewrite anchors, dots and whitespace. The only JS flag ever emitted is `u`.
 * - `u` is emitted only when needed: Unicode property classes, astral or surrogate code points,
 *   or a "wide" class (`.`, `[^...]`, `\S`...) that, without `u`, could match half of a surrogate
 *   pair where Python sees one code point. Without `u` (and without `i`), V8's linear-time engine
 *   can still run the pattern.
 * - Known, accepted differences: Unicode version skew (Python 3.11 has Unicode 14, Node's ICU is
 *   newer, so characters assigned since then may count as `\w`/`\d`/cased in JS only); `\N{NAME}`
 *   names are not checked (no name table here); Python's RecursionError on patterns nested ~450
 *   deep is not reproduced.
 */

// ---------------------------------------------------------------------------------------------
// Constants from CPython 3.11 (`_sre`, `re/_constants.py`, `re/_parser.py`)

const MAXREPEAT = 4294967295;
const MAXGROUPS = 1073741823;
const MAXCODE = 0xffffffff;
const MAXWIDTH = 2 ** 64;

const FLAG_TEMPLATE = 1;
const FLAG_IGNORECASE = 2;
const FLAG_LOCALE = 4;
const FLAG_MULTILINE = 8;
const FLAG_DOTALL = 16;
const FLAG_UNICODE = 32;
const FLAG_VERBOSE = 64;
const FLAG_DEBUG = 128;
const FLAG_ASCII = 256;
const TYPE_FLAGS = FLAG_ASCII | FLAG_LOCALE | FLAG_UNICODE;
const GLOBAL_FLAGS = FLAG_DEBUG | FLAG_TEMPLATE;
const FLAGS: Record<string, number> = {
  i: FLAG_IGNORECASE,
  L: FLAG_LOCALE,
  m: FLAG_MULTILINE,
  s: FLAG_DOTALL,
  x: FLAG_VERBOSE,
  a: FLAG_ASCII,
  t: FLAG_TEMPLATE,
  u: FLAG_UNICODE,
};

const DIGITS = '0123456789';
const OCTDIGITS = '01234567';
const HEXDIGITS = '0123456789abcdefABCDEF';
const SPECIAL_CHARS = '.\\[{()*+?^$|';
const REPEAT_CHARS = '*+?{';
/** `re` verbose-mode whitespace (not Unicode whitespace). */
const VERBOSE_WHITESPACE = ' \t\n\r\v\f';
const ESCAPES: Record<string, number> = {
  '\\a': 7,
  '\\b': 8,
  '\\f': 12,
  '\\n': 10,
  '\\r': 13,
  '\\t': 9,
  '\\v': 11,
  '\\\\': 92,
};

// ---------------------------------------------------------------------------------------------
// AST

type Category = 'd' | 'D' | 's' | 'S' | 'w' | 'W';
type Anchor = 'bol' | 'eol' | 'bos' | 'eos' | 'boundary' | 'nonboundary';
type SetItem =
  | { kind: 'char'; cp: number }
  | { kind: 'range'; lo: number; hi: number }
  | { kind: 'cat'; cat: Category }
  /** `\N{NAME}` inside a class. */
  | { kind: 'named'; name: string };
type RepeatMode = 'greedy' | 'lazy' | 'possessive';

type Node =
  | { type: 'seq'; items: Node[] }
  | { type: 'alt'; branches: Node[] }
  | { type: 'char'; cp: number }
  /** `\N{NAME}`: one character we cannot name without Unicode's name table. */
  | { type: 'namedChar'; name: string }
  | { type: 'set'; negate: boolean; items: SetItem[] }
  | { type: 'any' }
  | { type: 'at'; anchor: Anchor }
  | {
      type: 'group';
      index: number | null;
      name: string | null;
      addFlags: number;
      delFlags: number;
      body: Node;
    }
  | { type: 'atomic'; body: Node }
  | { type: 'look'; behind: boolean; negate: boolean; body: Node }
  | { type: 'repeat'; min: number; max: number; mode: RepeatMode; body: Node }
  | { type: 'backref'; group: number }
  | { type: 'cond'; group: number; yes: Node; no: Node | null };

type Width = [number, number];

/** What `re/_parser.py`'s `State` tracks: flags, groups and their widths. */
class State {
  flags = 0;
  readonly groupDict = new Map<string, number>();
  /** Index 0 stands for group 0; null while a group is open. */
  readonly groupWidths: (Width | null)[] = [null];
  readonly groupNames: (string | null)[] = [null];
  lookbehindGroups: number | null = null;
  readonly grouprefpos = new Map<number, number>();
  readonly widthCache = new WeakMap<Node, Width>();

  get groups(): number {
    return this.groupWidths.length;
  }
  checkGroup(gid: number): boolean {
    return gid < this.groups && this.groupWidths[gid] !== null;
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

/** `re.error` (pos set) or one of the other exceptions `re.compile` raises (pos null). */
class PyRegexError extends Error {
  constructor(
    readonly msg: string,
    readonly pos: number | null,
  ) {
    super(msg);
  }
}

/** Python's `repr()` of a str, for messages such as `unknown group name 'x'`. */
function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + hex(cp, 2);
    else if (cp < 0x7f || !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u.test(ch)) out += ch;
    else if (cp <= 0xff) out += '\\x' + hex(cp, 2);
    else if (cp <= 0xffff) out += '\\u' + hex(cp, 4);
    else out += '\\U' + hex(cp, 8);
  }
  return out + quote;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** Length in code points, the way Python counts positions. */
function plen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Tokenizer: `re/_parser.py`'s Tokenizer. A token is one code point or a backslash and the next
// code point. Reading ahead past a final backslash fails at once, as in Python, so that error
// wins over whatever the parser would have found next.

class Tokenizer {
  private readonly chars: string[];
  private index = 0;
  next: string | null = null;

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
    this.advance();
  }

  private advance(): void {
    let index = this.index;
    if (index >= this.chars.length) {
      this.next = null;
      return;
    }
    let char = this.chars[index];
    if (char === '\\') {
      index++;
      if (index >= this.chars.length) {
        throw new PyRegexError('bad escape (end of pattern)', this.chars.length - 1);
      }
      char += this.chars[index];
    }
    this.index = index + 1;
    this.next = char;
  }

  match(char: string): boolean {
    if (char === this.next) {
      this.advance();
      return true;
    }
    return false;
  }

  get(): string | null {
    const t = this.next;
    this.advance();
    return t;
  }

  getwhile(n: number, charset: string): string {
    let result = '';
    for (let i = 0; i < n; i++) {
      const c = this.next;
      if (c === null || c.length !== 1 || !charset.includes(c)) break;
      result += c;
      this.advance();
    }
    return result;
  }

  getuntil(terminator: string, name: string): string {
    let result = '';
    for (;;) {
      const c = this.next;
      this.advance();
      if (c === null) {
        if (!result) throw this.error('missing ' + name);
        throw this.error(`missing ${terminator}, unterminated name`, plen(result));
      }
      if (c === terminator) {
        if (!result) throw this.error('missing ' + name, 1);
        break;
      }
      result += c;
    }
    return result;
  }

  tell(): number {
    return this.index - (this.next === null ? 0 : plen(this.next));
  }

  seek(index: number): void {
    this.index = index;
    this.advance();
  }

  error(msg: string, offset = 0): PyRegexError {
    return new PyRegexError(msg, this.tell() - offset);
  }

  checkGroupName(name: string, offset: number): void {
    if (!isIdentifier(name)) {
      throw this.error(`bad character in group name ${pyRepr(name)}`, plen(name) + offset);
    }
  }
}

/** `str.isidentifier()`: XID_Start or `_`, then XID_Continue. */
function isIdentifier(s: string): boolean {
  return /^[\p{XID_Start}_]\p{XID_Continue}*$/u.test(s);
}

/** Python's str whitespace (`str.isspace`, `\s` in Unicode patterns). */
const PY_SPACE_RANGES: Ranges = [
  [0x09, 0x0d],
  [0x1c, 0x20],
  [0x85, 0x85],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];

/**
 * `int(s)` for a conditional group name that is not an identifier: optional whitespace and sign,
 * Unicode decimal digits with single underscores between them. Null where `int()` raises.
 */
function pyInt(s: string): bigint | null {
  const m =
    /^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*([+-]?)(\p{Nd}(?:_?\p{Nd})*)[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/u.exec(
      s,
    );
  if (!m) return null;
  let value = 0n;
  for (const ch of m[2]) {
    if (ch === '_') continue;
    value = value * 10n + BigInt(decimalValue(ch.codePointAt(0)!));
  }
  return m[1] === '-' ? -value : value;
}

/** Unicode decimal digits come in runs of 0..9, so a digit's value is its offset in its run. */
function decimalValue(cp: number): number {
  let run = 0;
  while (cp - run - 1 >= 0 && /\p{Nd}/u.test(String.fromCodePoint(cp - run - 1))) run++;
  return run % 10;
}

// ---------------------------------------------------------------------------------------------
// Parser: `_parse_sub`, `_parse`, `_escape`, `_class_escape`, `_parse_flags`, `parse`.

type ClassCode =
  | { kind: 'char'; cp: number }
  | { kind: 'cat'; cat: Category }
  | { kind: 'named'; name: string };
/** What `\x`, `\u`, `\U` or `\N{...}` stands for: a code point, or a name we cannot resolve. */
type NumericEscape = { cp: number } | { name: string };

class Parser {
  readonly state = new State();

  constructor(private readonly source: Tokenizer) {}

  /** `_parse_sub`: an alternation. */
  parseSub(verbose: boolean, nested: number): Node {
    const items: Node[] = [];
    for (;;) {
      items.push(this.parseSeq(verbose, nested + 1, nested === 0 && items.length === 0));
      if (!this.source.match('|')) break;
      // Global flags may have turned verbose mode on during the first alternative.
      if (nested === 0) verbose = (this.state.flags & FLAG_VERBOSE) !== 0;
    }
    return items.length === 1 ? items[0] : { type: 'alt', branches: items };
  }

  /** `_parse`: a sequence up to `|`, `)` or the end. */
  parseSeq(verbose: boolean, nested: number, first = false): Node {
    const source = this.source;
    const state = this.state;
    const items: Node[] = [];

    for (;;) {
      const thisTok = source.next;
      if (thisTok === null || thisTok === '|' || thisTok === ')') break;
      source.get();

      if (verbose) {
        if (VERBOSE_WHITESPACE.includes(thisTok)) continue;
        if (thisTok === '#') {
          for (;;) {
            const t = source.get();
            if (t === null || t === '\n') break;
          }
          continue;
        }
      }

      if (thisTok[0] === '\\') {
        items.push(this.escape(thisTok));
      } else if (!SPECIAL_CHARS.includes(thisTok)) {
        items.push({ type: 'char', cp: thisTok.codePointAt(0)! });
      } else if (thisTok === '[') {
        items.push(this.parseSet());
      } else if (REPEAT_CHARS.includes(thisTok)) {
        const here = source.tell();
        let min: number;
        let max: number;
        if (thisTok === '?') [min, max] = [0, 1];
        else if (thisTok === '*') [min, max] = [0, MAXREPEAT];
        else if (thisTok === '+') [min, max] = [1, MAXREPEAT];
        else {
          // `{`: a repeat only if it reads `{m}`, `{m,}`, `{,n}` or `{m,n}`; else a literal.
          if (source.next === '}') {
            items.push({ type: 'char', cp: 0x7b });
            continue;
          }
          [min, max] = [0, MAXREPEAT];
          let lo = '';
          let hi = '';
          while (source.next !== null && DIGITS.includes(source.next)) lo += source.get();
          if (source.match(',')) {
            while (source.next !== null && DIGITS.includes(source.next)) hi += source.get();
          } else hi = lo;
          if (!source.match('}')) {
            items.push({ type: 'char', cp: 0x7b });
            source.seek(here);
            continue;
          }
          if (lo) {
            min = Number(lo);
            if (min >= MAXREPEAT) throw new PyRegexError('the repetition number is too large', null);
          }
          if (hi) {
            max = Number(hi);
            if (max >= MAXREPEAT) throw new PyRegexError('the repetition number is too large', null);
            if (max < min) throw source.error('min repeat greater than max repeat', source.tell() - here);
          }
        }
        const item = items.length > 0 ? items[items.length - 1] : null;
        if (item === null || item.type === 'at') {
          throw source.error('nothing to repeat', source.tell() - here + plen(thisTok));
        }
        if (item.type === 'repeat') {
          throw source.error('multiple repeat', source.tell() - here + plen(thisTok));
        }
        const mode: RepeatMode = source.match('?') ? 'lazy' : source.match('+') ? 'possessive' : 'greedy';
        items[items.length - 1] = { type: 'repeat', min, max, mode, body: item };
      } else if (thisTok === '.') {
        items.push({ type: 'any' });
      } else if (thisTok === '(') {
        const node = this.parseGroup(verbose, nested, first && items.length === 0);
        if (node === 'flags') verbose = (state.flags & FLAG_VERBOSE) !== 0;
        else if (node !== null) items.push(node);
      } else if (thisTok === '^') {
        items.push({ type: 'at', anchor: 'bol' });
      } else if (thisTok === '$') {
        items.push({ type: 'at', anchor: 'eol' });
      }
    }
    return { type: 'seq', items };
  }

  /**
   * After `(`: a group, look-around, conditional or back-reference node; null for a comment;
   * 'flags' for global inline flags (which append nothing).
   */
  private parseGroup(verbose: boolean, nested: number, atStart: boolean): Node | null | 'flags' {
    const source = this.source;
    const state = this.state;
    const start = source.tell() - 1;
    let capture = true;
    let atomic = false;
    let name: string | null = null;
    let addFlags = 0;
    let delFlags = 0;

    if (source.match('?')) {
      const char = source.get();
      if (char === null) throw source.error('unexpected end of pattern');
      if (char === 'P') {
        if (source.match('<')) {
          name = source.getuntil('>', 'group name');
          source.checkGroupName(name, 1);
        } else if (source.match('=')) {
          const ref = source.getuntil(')', 'group name');
          source.checkGroupName(ref, 1);
          const gid = state.groupDict.get(ref);
          if (gid === undefined) throw source.error(`unknown group name ${pyRepr(ref)}`, plen(ref) + 1);
          if (!state.checkGroup(gid)) throw source.error('cannot refer to an open group', plen(ref) + 1);
          this.checkLookbehindGroup(gid);
          return { type: 'backref', group: gid };
        } else {
          const c = source.get();
          if (c === null) throw source.error('unexpected end of pattern');
          throw source.error('unknown extension ?P' + c, plen(c) + 2);
        }
      } else if (char === ':') {
        capture = false;
      } else if (char === '#') {
        for (;;) {
          if (source.next === null)
            throw source.error('missing ), unterminated comment', source.tell() - start);
          if (source.get() === ')') break;
        }
        return null;
      } else if (char === '=' || char === '!' || char === '<') {
        let kind = char;
        let behind = false;
        let outerLookbehind: number | null = null;
        if (char === '<') {
          const c = source.get();
          if (c === null) throw source.error('unexpected end of pattern');
          if (c !== '=' && c !== '!') throw source.error('unknown extension ?<' + c, plen(c) + 2);
          kind = c;
          behind = true;
          outerLookbehind = state.lookbehindGroups;
          if (outerLookbehind === null) state.lookbehindGroups = state.groups;
        }
        const body = this.parseSub(verbose, nested + 1);
        if (behind && outerLookbehind === null) state.lookbehindGroups = null;
        if (!source.match(')'))
          throw source.error('missing ), unterminated subpattern', source.tell() - start);
        return { type: 'look', behind, negate: kind === '!', body };
      } else if (char === '(') {
        return this.parseConditional(verbose, nested, start);
      } else if (char === '>') {
        capture = false;
        atomic = true;
      } else if (Object.hasOwn(FLAGS, char) || char === '-') {
        const flags = this.parseFlags(char);
        if (flags === null) {
          if (!atStart) {
            throw source.error('global flags not at the start of the expression', source.tell() - start);
          }
          return 'flags';
        }
        [addFlags, delFlags] = flags;
        capture = false;
      } else {
        throw source.error('unknown extension ?' + char, plen(char) + 1);
      }
    }

    let group: number | null = null;
    if (capture) group = this.openGroup(name);
    const subVerbose = (verbose || (addFlags & FLAG_VERBOSE) !== 0) && (delFlags & FLAG_VERBOSE) === 0;
    const body = this.parseSub(subVerbose, nested + 1);
    if (!source.match(')')) throw source.error('missing ), unterminated subpattern', source.tell() - start);
    if (group !== null) state.groupWidths[group] = this.width(body);
    if (atomic) return { type: 'atomic', body };
    return { type: 'group', index: group, name, addFlags, delFlags, body };
  }

  private openGroup(name: string | null): number {
    const state = this.state;
    const gid = state.groups;
    state.groupWidths.push(null);
    state.groupNames.push(name);
    if (state.groups > MAXGROUPS)
      throw this.source.error('too many groups', name === null ? 0 : plen(name) + 1);
    if (name !== null) {
      const old = state.groupDict.get(name);
      if (old !== undefined) {
        throw this.source.error(
          `redefinition of group name ${pyRepr(name)} as group ${gid}; was group ${old}`,
          plen(name) + 1,
        );
      }
      state.groupDict.set(name, gid);
    }
    return gid;
  }

  /** `(?(id/name)yes|no)` */
  private parseConditional(verbose: boolean, nested: number, start: number): Node {
    const source = this.source;
    const state = this.state;
    const condname = source.getuntil(')', 'group name');
    let condgroup: number;
    if (isIdentifier(condname)) {
      const gid = state.groupDict.get(condname);
      if (gid === undefined) throw source.error(`unknown group name ${pyRepr(condname)}`, plen(condname) + 1);
      condgroup = gid;
    } else {
      const n = pyInt(condname);
      if (n === null || n < 0n) {
        throw source.error(`bad character in group name ${pyRepr(condname)}`, plen(condname) + 1);
      }
      if (n === 0n) throw source.error('bad group number', plen(condname) + 1);
      if (n >= BigInt(MAXGROUPS)) throw source.error(`invalid group reference ${n}`, plen(condname) + 1);
      condgroup = Number(n);
      if (!state.grouprefpos.has(condgroup)) {
        state.grouprefpos.set(condgroup, source.tell() - plen(condname) - 1);
      }
    }
    this.checkLookbehindGroup(condgroup);
    const yes = this.parseSeq(verbose, nested + 1);
    let no: Node | null = null;
    if (source.match('|')) {
      no = this.parseSeq(verbose, nested + 1);
      if (source.next === '|') throw source.error('conditional backref with more than two branches');
    }
    if (!source.match(')')) throw source.error('missing ), unterminated subpattern', source.tell() - start);
    return { type: 'cond', group: condgroup, yes, no };
  }

  /** `_parse_flags`: [add, del] for `(?flags-flags:`, null for global `(?flags)`. */
  private parseFlags(first: string): [number, number] | null {
    const source = this.source;
    let char: string | null = first;
    let add = 0;
    let del = 0;
    if (char !== '-') {
      for (;;) {
        const flag: number = FLAGS[char];
        if (char === 'L') throw source.error("bad inline flags: cannot use 'L' flag with a str pattern");
        add |= flag;
        if ((flag & TYPE_FLAGS) !== 0 && (add & TYPE_FLAGS) !== flag) {
          throw source.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible");
        }
        char = source.get();
        if (char === null) throw source.error('missing -, : or )');
        if (char === ')' || char === '-' || char === ':') break;
        if (!Object.hasOwn(FLAGS, char)) {
          throw source.error(isAlpha(char) ? 'unknown flag' : 'missing -, : or )', plen(char));
        }
      }
    }
    if (char === ')') {
      this.state.flags |= add;
      return null;
    }
    if (add & GLOBAL_FLAGS) throw source.error('bad inline flags: cannot turn on global flag', 1);
    if (char === '-') {
      char = source.get();
      if (char === null) throw source.error('missing flag');
      if (!Object.hasOwn(FLAGS, char))
        throw source.error(isAlpha(char) ? 'unknown flag' : 'missing flag', plen(char));
      for (;;) {
        const flag: number = FLAGS[char];
        if (flag & TYPE_FLAGS) throw source.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
        del |= flag;
        char = source.get();
        if (char === null) throw source.error('missing :');
        if (char === ':') break;
        if (!Object.hasOwn(FLAGS, char))
          throw source.error(isAlpha(char) ? 'unknown flag' : 'missing :', plen(char));
      }
    }
    if (del & GLOBAL_FLAGS) throw source.error('bad inline flags: cannot turn off global flag', 1);
    if (add & del) throw source.error('bad inline flags: flag turned on and off', 1);
    return [add, del];
  }

  /** Inside a look-behind, a group reference must point to a group closed before it began. */
  private checkLookbehindGroup(gid: number): void {
    const lb = this.state.lookbehindGroups;
    if (lb === null) return;
    if (!this.state.checkGroup(gid)) throw this.source.error('cannot refer to an open group');
    if (gid >= lb) throw this.source.error('cannot refer to group defined in the same lookbehind subpattern');
  }

  /** `[...]` after the `[`. */
  private parseSet(): Node {
    const source = this.source;
    const here = source.tell() - 1;
    const items: SetItem[] = [];
    const negate = source.match('^');
    for (;;) {
      const thisTok = source.get();
      if (thisTok === null) throw source.error('unterminated character set', source.tell() - here);
      // A `]` first in the set is a literal.
      if (thisTok === ']' && items.length > 0) break;
      const code1: ClassCode =
        thisTok[0] === '\\' ? this.classEscape(thisTok) : { kind: 'char', cp: thisTok.codePointAt(0)! };
      if (source.match('-')) {
        const that = source.get();
        if (that === null) throw source.error('unterminated character set', source.tell() - here);
        if (that === ']') {
          items.push(code1, { kind: 'char', cp: 0x2d });
          break;
        }
        const code2: ClassCode =
          that[0] === '\\' ? this.classEscape(that) : { kind: 'char', cp: that.codePointAt(0)! };
        const size = plen(thisTok) + 1 + plen(that);
        if (code1.kind === 'cat' || code2.kind === 'cat') {
          throw source.error(`bad character range ${thisTok}-${that}`, size);
        }
        if (code1.kind === 'named' || code2.kind === 'named') {
          // The order of named characters cannot be checked here; keep the range unresolved.
          items.push({
            kind: 'named',
            name: code1.kind === 'named' ? code1.name : (code2 as { name: string }).name,
          });
          continue;
        }
        if (code2.cp < code1.cp) throw source.error(`bad character range ${thisTok}-${that}`, size);
        items.push({ kind: 'range', lo: code1.cp, hi: code2.cp });
      } else {
        items.push(code1);
      }
    }
    return { type: 'set', negate, items };
  }

  /** `_class_escape`: an escape inside `[...]`. */
  private classEscape(tok: string): ClassCode {
    const source = this.source;
    const simple = ESCAPES[tok];
    if (simple !== undefined) return { kind: 'char', cp: simple };
    const c = tok.slice(1);
    if ('dDsSwW'.includes(c)) return { kind: 'cat', cat: c as Category };
    const numeric = this.numericEscape(tok, c);
    if (numeric !== null)
      return 'cp' in numeric ? { kind: 'char', cp: numeric.cp } : { kind: 'named', name: numeric.name };
    if (OCTDIGITS.includes(c)) {
      // Up to three octal digits.
      const full = tok + source.getwhile(2, OCTDIGITS);
      const value = Number.parseInt(full.slice(1), 8);
      if (value > 0o377) {
        throw source.error(`octal escape value ${full} outside of range 0-0o377`, plen(full));
      }
      return { kind: 'char', cp: value };
    }
    if (DIGITS.includes(c) || isAsciiLetter(c)) throw source.error(`bad escape ${tok}`, plen(tok));
    return { kind: 'char', cp: c.codePointAt(0)! };
  }

  /** `\x`, `\u`, `\U` and `\N{...}`, common to both escape kinds; null for another escape. */
  private numericEscape(tok: string, c: string): NumericEscape | null {
    const source = this.source;
    const digits = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
    if (digits > 0) {
      const full = tok + source.getwhile(digits, HEXDIGITS);
      if (full.length !== digits + 2) throw source.error(`incomplete escape ${full}`, plen(full));
      const value = Number.parseInt(full.slice(2), 16);
      if (value > 0x10ffff) throw source.error(`bad escape ${full}`, plen(full));
      return { cp: value };
    }
    if (c === 'N') {
      if (!source.match('{')) throw source.error('missing {');
      const charname = source.getuntil('}', 'character name');
      // Without Unicode's name table only the alphabet of names can be checked: letters
      // (any case), digits, space and hyphen.
      if (!/^[A-Za-z0-9 -]+$/.test(charname)) {
        throw source.error(`undefined character name ${pyRepr(charname)}`, plen(charname) + 4);
      }
      return { name: charname };
    }
    return null;
  }

  /** `_escape`: an escape outside `[...]`. */
  private escape(tok: string): Node {
    const source = this.source;
    const state = this.state;
    const c = tok.slice(1);
    switch (c) {
      case 'A':
        return { type: 'at', anchor: 'bos' };
      case 'Z':
        return { type: 'at', anchor: 'eos' };
      case 'b':
        return { type: 'at', anchor: 'boundary' };
      case 'B':
        return { type: 'at', anchor: 'nonboundary' };
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W':
        return { type: 'set', negate: false, items: [{ kind: 'cat', cat: c }] };
    }
    const simple = ESCAPES[tok];
    if (simple !== undefined) return { type: 'char', cp: simple };
    const numeric = this.numericEscape(tok, c);
    if (numeric !== null)
      return 'cp' in numeric ? { type: 'char', cp: numeric.cp } : { type: 'namedChar', name: numeric.name };
    if (c === '0') {
      const full = tok + source.getwhile(2, OCTDIGITS);
      return { type: 'char', cp: Number.parseInt(full.slice(1), 8) };
    }
    if (DIGITS.includes(c)) {
      // An octal escape (three octal digits) or a group reference (one or two digits).
      let full = tok;
      if (source.next !== null && DIGITS.includes(source.next)) {
        full += source.get();
        if (
          OCTDIGITS.includes(full[1]) &&
          OCTDIGITS.includes(full[2]) &&
          source.next !== null &&
          OCTDIGITS.includes(source.next)
        ) {
          full += source.get();
          const value = Number.parseInt(full.slice(1), 8);
          if (value > 0o377) {
            throw source.error(`octal escape value ${full} outside of range 0-0o377`, plen(full));
          }
          return { type: 'char', cp: value };
        }
      }
      const group = Number(full.slice(1));
      if (group < state.groups) {
        if (!state.checkGroup(group)) throw source.error('cannot refer to an open group', plen(full));
        this.checkLookbehindGroup(group);
        return { type: 'backref', group };
      }
      throw source.error(`invalid group reference ${group}`, plen(full) - 1);
    }
    if (isAsciiLetter(c)) throw source.error(`bad escape ${tok}`, plen(tok));
    return { type: 'char', cp: c.codePointAt(0)! };
  }

  /** `SubPattern.getwidth()`: the (min, max) length a node can match, capped at MAXWIDTH. */
  width(node: Node): Width {
    const cached = this.state.widthCache.get(node);
    if (cached) return cached;
    let w: Width;
    switch (node.type) {
      case 'seq': {
        let lo = 0;
        let hi = 0;
        for (const item of node.items) {
          const [i, j] = this.width(item);
          lo += i;
          hi += j;
        }
        w = [lo, hi];
        break;
      }
      case 'alt': {
        let lo = MAXWIDTH;
        let hi = 0;
        for (const b of node.branches) {
          const [i, j] = this.width(b);
          lo = Math.min(lo, i);
          hi = Math.max(hi, j);
        }
        w = [lo, hi];
        break;
      }
      case 'char':
      case 'namedChar':
      case 'set':
      case 'any':
        w = [1, 1];
        break;
      case 'at':
      case 'look':
        w = [0, 0];
        break;
      case 'group':
      case 'atomic':
        w = this.width(node.body);
        break;
      case 'repeat': {
        const [i, j] = this.width(node.body);
        w = [i * node.min, node.max === MAXREPEAT && j > 0 ? MAXWIDTH : j * node.max];
        break;
      }
      case 'backref':
        w = this.state.groupWidths[node.group] ?? [0, 0];
        break;
      case 'cond': {
        let [i, j] = this.width(node.yes);
        if (node.no !== null) {
          const [l, h] = this.width(node.no);
          i = Math.min(i, l);
          j = Math.max(j, h);
        } else i = 0;
        w = [i, j];
        break;
      }
    }
    w = [Math.min(w[0], MAXWIDTH), Math.min(w[1], MAXWIDTH)];
    this.state.widthCache.set(node, w);
    return w;
  }

  /** The checks `re/_compiler.py` makes, in its (pre-order) order. */
  compileChecks(node: Node): void {
    switch (node.type) {
      case 'seq':
        for (const item of node.items) this.compileChecks(item);
        return;
      case 'alt':
        for (const b of node.branches) this.compileChecks(b);
        return;
      case 'look':
        if (node.behind) {
          const [lo, hi] = this.width(node.body);
          if (lo > MAXCODE) throw new PyRegexError('looks too much behind', null);
          if (lo !== hi) throw new PyRegexError('look-behind requires fixed-width pattern', null);
        }
        this.compileChecks(node.body);
        return;
      case 'repeat':
        if (this.state.flags & FLAG_TEMPLATE) {
          const op =
            node.mode === 'greedy' ? 'MAX_REPEAT' : node.mode === 'lazy' ? 'MIN_REPEAT' : 'POSSESSIVE_REPEAT';
          throw new PyRegexError(`internal: unsupported template operator ${op}`, null);
        }
        this.compileChecks(node.body);
        return;
      case 'group':
      case 'atomic':
        this.compileChecks(node.body);
        return;
      case 'cond':
        this.compileChecks(node.yes);
        if (node.no) this.compileChecks(node.no);
        return;
      default:
        return;
    }
  }
}

function isAsciiLetter(c: string): boolean {
  return c.length === 1 && /[A-Za-z]/.test(c);
}

function isAlpha(s: string): boolean {
  return /^[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}]+$/u.test(s);
}

/** `re.compile`'s parse and compile checks. Throws PyRegexError. */
function parsePython(pattern: string): { ast: Node; parser: Parser } {
  const source = new Tokenizer(pattern);
  const parser = new Parser(source);
  const ast = parser.parseSub(false, 0);
  const flags = parser.state.flags;
  if (flags & FLAG_ASCII && flags & FLAG_UNICODE) {
    throw new PyRegexError('ASCII and UNICODE flags are incompatible', null);
  }
  if (source.next !== null) throw source.error('unbalanced parenthesis');
  for (const [g, pos] of parser.state.grouprefpos) {
    if (g >= parser.state.groups) throw new PyRegexError(`invalid group reference ${g}`, pos);
  }
  parser.compileChecks(ast);
  return { ast, parser };
}

/**
 * Null when Python 3.11's `re.compile(pattern)` succeeds, else its message, e.g.
 * `missing ), unterminated subpattern at position 0`.
 */
export function pythonRegexError(pattern: string): string | null {
  try {
    parsePython(pattern);
    return null;
  } catch (e) {
    if (e instanceof PyRegexError) return formatError(e, pattern);
    // A pattern nested deep enough to overflow our stack overflows Python's far sooner.
    if (e instanceof RangeError && /call stack/i.test(e.message)) return 'maximum recursion depth exceeded';
    throw e;
  }
}

/** `re.error`'s message: `msg at position N`, plus `(line L, column C)` for multi-line patterns. */
function formatError(e: PyRegexError, pattern: string): string {
  if (e.pos === null) return e.msg;
  let msg = `${e.msg} at position ${e.pos}`;
  const chars = Array.from(pattern);
  if (chars.includes('\n')) {
    const before = chars.slice(0, e.pos);
    const lineno = before.filter((c) => c === '\n').length + 1;
    const colno = e.pos - before.lastIndexOf('\n');
    msg += ` (line ${lineno}, column ${colno})`;
  }
  return msg;
}

// ---------------------------------------------------------------------------------------------
// Code point sets: sorted, disjoint, non-adjacent [lo, hi] ranges.

type Ranges = [number, number][];

function normalize(ranges: Ranges): Ranges {
  const sorted = ranges.slice().sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function inRanges(ranges: Ranges, cp: number): boolean {
  let a = 0;
  let b = ranges.length - 1;
  while (a <= b) {
    const m = (a + b) >> 1;
    if (cp < ranges[m][0]) b = m - 1;
    else if (cp > ranges[m][1]) a = m + 1;
    else return true;
  }
  return false;
}

function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/** ranges minus the given (sorted or not) points. */
function removePoints(ranges: Ranges, points: number[]): Ranges {
  const holes = normalize(points.map((p): [number, number] => [p, p]));
  // A \ B = complement(complement(A) ∪ B)
  return complement(normalize([...complement(ranges), ...holes]));
}

// ---------------------------------------------------------------------------------------------
// Case-insensitive matching, Python's way (re/_compiler.py, re/_casefix.py): a character `ch`
// matches a set S under IGNORECASE when lower(ch) is in L = {lower(x) : x in S} plus the
// "extra cases" of those lowercase letters (letters with different lowercase but the same
// uppercase, such as s and ſ). `lower` is the simple one-code-point lowercase mapping.

interface CaseTable {
  /** Every code point whose lowercase differs from it, with that lowercase. */
  lower: Map<number, number>;
  /** lowercase -> the other code points with that lowercase. */
  upper: Map<number, number[]>;
  fixes: Map<number, number[]>;
}

function caseTable(lower: Map<number, number>, fixes: Map<number, number[]>): CaseTable {
  const upper = new Map<number, number[]>();
  for (const [cp, l] of lower) {
    const list = upper.get(l);
    if (list) list.push(cp);
    else upper.set(l, [cp]);
  }
  return { lower, upper, fixes };
}

/** `re/_casefix.py` as groups of case-equivalent lowercase letters. */
const EXTRA_CASE_GROUPS: number[][] = [
  [0x69, 0x131],
  [0x73, 0x17f],
  [0xb5, 0x3bc],
  [0x345, 0x3b9, 0x1fbe],
  [0x390, 0x1fd3],
  [0x3b0, 0x1fe3],
  [0x3b2, 0x3d0],
  [0x3b5, 0x3f5],
  [0x3b8, 0x3d1],
  [0x3ba, 0x3f0],
  [0x3c0, 0x3d6],
  [0x3c1, 0x3f1],
  [0x3c2, 0x3c3],
  [0x3c6, 0x3d5],
  [0x432, 0x1c80],
  [0x434, 0x1c81],
  [0x43e, 0x1c82],
  [0x441, 0x1c83],
  [0x442, 0x1c84, 0x1c85],
  [0x44a, 0x1c86],
  [0x463, 0x1c87],
  [0x1c88, 0xa64b],
  [0x1e61, 0x1e9b],
  [0xfb05, 0xfb06],
];

let unicodeCaseTable: CaseTable | undefined;

/**
 * Built once from the engine's own case data. All cased code points are below U+20000.
 * `toLowerCase` is the full mapping; the simple mapping is its first code point (U+0130 İ is the
 * one character whose full lowercase is longer: `i̇`, simple `i`).
 */
function unicodeCases(): CaseTable {
  if (unicodeCaseTable) return unicodeCaseTable;
  const lower = new Map<number, number>();
  for (let cp = 0; cp < 0x20000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const l = String.fromCodePoint(cp).toLowerCase().codePointAt(0)!;
    if (l !== cp) lower.set(cp, l);
  }
  const fixes = new Map<number, number[]>();
  for (const group of EXTRA_CASE_GROUPS) {
    for (const cp of group)
      fixes.set(
        cp,
        group.filter((x) => x !== cp),
      );
  }
  unicodeCaseTable = caseTable(lower, fixes);
  return unicodeCaseTable;
}

/** With `(?a)`, IGNORECASE folds ASCII letters only and has no extra cases. */
const ASCII_CASES: CaseTable = caseTable(
  new Map(Array.from({ length: 26 }, (_, i): [number, number] => [0x41 + i, 0x61 + i])),
  new Map(),
);

/** Every code point that matches the set `ranges` case-insensitively, per Python. */
function caseClose(ranges: Ranges, table: CaseTable): Ranges {
  if (ranges.length === 1 && ranges[0][0] === ranges[0][1]) {
    // One character (the common case): its lowercase, their extra cases, and everything that
    // lowercases to one of those.
    const lo = table.lower.get(ranges[0][0]) ?? ranges[0][0];
    const out: Ranges = [];
    for (const l of [lo, ...(table.fixes.get(lo) ?? [])]) {
      if (!table.lower.has(l)) out.push([l, l]);
      for (const u of table.upper.get(l) ?? []) out.push([u, u]);
    }
    return normalize(out);
  }
  // L = lower(S): members with a different lowercase are replaced by it.
  const replaced: number[] = [];
  const lowers: Ranges = [];
  for (const [cp, l] of table.lower) {
    if (inRanges(ranges, cp)) {
      replaced.push(cp);
      lowers.push([l, l]);
    }
  }
  let low = normalize([...removePoints(ranges, replaced), ...lowers]);
  const extra: Ranges = [];
  for (const [cp, others] of table.fixes) {
    if (inRanges(low, cp)) for (const o of others) extra.push([o, o]);
  }
  low = normalize([...low, ...extra]);
  // M = {ch : lower(ch) in L} = (L minus the characters that lowercase to something else)
  //     plus those characters whose lowercase is in L.
  const changing = [...table.lower.keys()];
  const matched: Ranges = [];
  for (const [cp, l] of table.lower) if (inRanges(low, l)) matched.push([cp, cp]);
  return normalize([...removePoints(low, changing), ...matched]);
}

// ---------------------------------------------------------------------------------------------
// Translation to a JavaScript RegExp.

/** A character class to emit once we know whether the `u` flag is on. */
interface ClassPiece {
  negate: boolean;
  ranges: Ranges;
  /** Unicode property escapes (`\p{Nd}`...), only usable with `u`. */
  props: string[];
  /** Includes Unicode `\W`, which a single JS class cannot union with other members. */
  nonWord: boolean;
}
type Piece = string | ClassPiece;

class Unsupported extends Error {}

const ASCII_DIGIT: Ranges = [[0x30, 0x39]];
const ASCII_WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const ASCII_SPACE: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
];
const UNICODE_WORD: ClassPiece = {
  negate: false,
  ranges: [[0x5f, 0x5f]],
  props: ['\\p{L}', '\\p{N}'],
  nonWord: false,
};
const ASCII_WORD_CLASS: ClassPiece = { negate: false, ranges: ASCII_WORD, props: [], nonWord: false };
/** In a look-around, whether there is a character at all; never needs `u`. */
const ANY_UNIT = '[\\s\\S]';

class Translator {
  private readonly ascii: boolean;
  private readonly ignoreCase: boolean;
  private readonly multiline: boolean;
  private readonly dotAll: boolean;
  /** Groups every path through the pattern passes (not under `|`, a repeat or a look-around). */
  private readonly certainGroups = new Set<number>();

  constructor(
    flags: number,
    private readonly groupNames: (string | null)[],
  ) {
    this.ascii = (flags & FLAG_ASCII) !== 0;
    this.ignoreCase = (flags & FLAG_IGNORECASE) !== 0;
    this.multiline = (flags & FLAG_MULTILINE) !== 0;
    this.dotAll = (flags & FLAG_DOTALL) !== 0;
  }

  /** Pieces for a node; `certain` says the node is on every path through the pattern. */
  node(n: Node, certain: boolean): Piece[] {
    switch (n.type) {
      case 'seq':
        return n.items.flatMap((item) => this.node(item, certain));
      case 'alt': {
        const out: Piece[] = [];
        n.branches.forEach((b, i) => {
          if (i > 0) out.push('|');
          out.push(...this.node(b, false));
        });
        return out;
      }
      case 'char':
        return [this.charClass(n.cp)];
      case 'set':
        return [this.setClass(n.negate, n.items)];
      case 'any':
        // `.` never matches `\n` unless DOTALL; IGNORECASE does not apply to it.
        return [{ negate: true, ranges: this.dotAll ? [] : [[0x0a, 0x0a]], props: [], nonWord: false }];
      case 'at':
        return this.anchor(n.anchor);
      case 'group': {
        if (n.addFlags !== 0 || n.delFlags !== 0) throw new Unsupported('scoped flags');
        const body = this.node(n.body, certain);
        if (n.index === null) return ['(?:', ...body, ')'];
        if (certain) this.certainGroups.add(n.index);
        const name = this.jsGroupName(n.index);
        return [name ? `(?<${name}>` : '(', ...body, ')'];
      }
      case 'look': {
        const open = `(?${n.behind ? '<' : ''}${n.negate ? '!' : '='}`;
        return [open, ...this.node(n.body, false), ')'];
      }
      case 'repeat': {
        if (n.mode === 'possessive') throw new Unsupported('possessive repeat');
        const body = this.node(n.body, false);
        const atom = isAtom(n.body) ? body : ['(?:', ...body, ')'];
        let q: string;
        if (n.min === 0 && n.max === MAXREPEAT) q = '*';
        else if (n.min === 1 && n.max === MAXREPEAT) q = '+';
        else if (n.min === 0 && n.max === 1) q = '?';
        else if (n.max === MAXREPEAT) q = `{${n.min},}`;
        else if (n.min === n.max) q = `{${n.min}}`;
        else q = `{${n.min},${n.max}}`;
        return [...atom, q + (n.mode === 'lazy' ? '?' : '')];
      }
      case 'backref': {
        // JS and Python differ when the group did not take part in the match (JS matches the
        // empty string, Python fails) and under IGNORECASE; translate only the safe case.
        if (this.ignoreCase) throw new Unsupported('case-insensitive back-reference');
        if (!this.certainGroups.has(n.group)) throw new Unsupported('back-reference to an optional group');
        const name = this.jsGroupName(n.group);
        return [name ? `\\k<${name}>` : `(?:\\${n.group})`];
      }
      case 'namedChar':
        throw new Unsupported('\\N{...}');
      case 'atomic':
        throw new Unsupported('atomic group');
      case 'cond':
        throw new Unsupported('conditional');
    }
  }

  /** JS group names are kept when they are plain ASCII identifiers; else the group is numbered. */
  private jsGroupName(index: number): string | null {
    const name = this.groupNames[index];
    return name && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : null;
  }

  private anchor(a: Anchor): Piece[] {
    // No JS `m` flag is ever set, so JS `^`/`$` are the start and end of the input.
    switch (a) {
      case 'bos':
        return ['^'];
      case 'eos':
        return ['$'];
      case 'bol':
        return [this.multiline ? '(?<![^\\n])' : '^'];
      case 'eol':
        // Python's `$`: at the end, or before a newline that ends the string (any newline
        // under MULTILINE).
        return [this.multiline ? '(?![^\\n])' : '(?=\\n?$)'];
      case 'boundary': {
        const w = this.wordClass();
        return ['(?:(?<=', w, ')(?!', w, ')|(?<!', w, ')(?=', w, '))'];
      }
      case 'nonboundary': {
        // Python 3.11's `\B` never matches in an empty string.
        const w = this.wordClass();
        return ['(?:(?<=', w, ')(?=', w, ')|(?<!', w, ')(?!', w, `)(?:(?<=${ANY_UNIT})|(?=${ANY_UNIT})))`];
      }
    }
  }

  private wordClass(): ClassPiece {
    return this.ascii ? ASCII_WORD_CLASS : UNICODE_WORD;
  }

  private charClass(cp: number): ClassPiece {
    const ranges: Ranges = [[cp, cp]];
    return { negate: false, ranges: this.fold(ranges), props: [], nonWord: false };
  }

  private fold(ranges: Ranges): Ranges {
    if (!this.ignoreCase) return ranges;
    return caseClose(ranges, this.ascii ? ASCII_CASES : unicodeCases());
  }

  private setClass(negate: boolean, items: SetItem[]): ClassPiece {
    const ranges: Ranges = [];
    const catRanges: Ranges = [];
    const props: string[] = [];
    let nonWord = false;
    for (const item of items) {
      if (item.kind === 'named') throw new Unsupported('\\N{...}');
      // Python quirk: with ASCII and IGNORECASE, a range reaching past the BMP also matches
      // characters whose Unicode uppercase falls in it (RANGE_UNI_IGNORE). Not worth mimicking.
      if (item.kind === 'range' && item.hi > 0xffff && this.ascii && this.ignoreCase) {
        throw new Unsupported('ASCII case-insensitive astral range');
      }
      if (item.kind === 'char') ranges.push([item.cp, item.cp]);
      else if (item.kind === 'range') ranges.push([item.lo, item.hi]);
      else if (this.ascii) {
        const base =
          item.cat.toLowerCase() === 'd'
            ? ASCII_DIGIT
            : item.cat.toLowerCase() === 'w'
              ? ASCII_WORD
              : ASCII_SPACE;
        catRanges.push(...(item.cat === item.cat.toLowerCase() ? base : complement(base)));
      } else {
        switch (item.cat) {
          case 'd':
            props.push('\\p{Nd}');
            break;
          case 'D':
            props.push('\\P{Nd}');
            break;
          case 'w':
            props.push('\\p{L}', '\\p{N}');
            catRanges.push([0x5f, 0x5f]);
            break;
          case 'W':
            nonWord = true;
            break;
          case 's':
            catRanges.push(...PY_SPACE_RANGES);
            break;
          case 'S':
            catRanges.push(...complement(PY_SPACE_RANGES));
            break;
        }
      }
    }
    // Categories are unchanged by case folding (lower(ch) is in \w, \d, \s exactly when ch is),
    // so only the literal members are folded.
    const all = normalize([...this.fold(normalize(ranges)), ...catRanges]);
    return { negate, ranges: all, props: [...new Set(props)], nonWord };
  }
}

/** Nodes whose translation is a single JS atom, safe to quantify directly. */
function isAtom(n: Node): boolean {
  return (
    n.type === 'char' || n.type === 'set' || n.type === 'any' || n.type === 'group' || n.type === 'backref'
  );
}

/**
 * Whether a class needs the `u` flag: property escapes, astral or surrogate members, or a
 * negation (without `u` it would match half of a surrogate pair).
 */
function classNeedsUnicode(c: ClassPiece): boolean {
  return (
    c.negate ||
    c.nonWord ||
    c.props.length > 0 ||
    c.ranges.some(([lo, hi]) => hi > 0xffff || (hi >= 0xd800 && lo <= 0xdfff))
  );
}

function emitCodePoint(cp: number, unicode: boolean, inClass: boolean): string {
  const ch = String.fromCodePoint(cp);
  if (cp >= 0x20 && cp < 0x7f) {
    const special = inClass ? '\\]-[^' : '^$\\.*+?()[]{}|/';
    return special.includes(ch) ? '\\' + ch : ch;
  }
  if (unicode) return `\\u{${cp.toString(16)}}`;
  return '\\u' + hex(cp, 4);
}

function emitClass(c: ClassPiece, unicode: boolean): string {
  if (
    !c.negate &&
    !c.nonWord &&
    c.props.length === 0 &&
    c.ranges.length === 1 &&
    c.ranges[0][0] === c.ranges[0][1]
  ) {
    return emitCodePoint(c.ranges[0][0], unicode, false);
  }
  if (!c.negate && !c.nonWord && c.ranges.length === 0 && c.props.length === 1) return c.props[0];
  let body = '';
  for (const [lo, hi] of c.ranges) {
    body += emitCodePoint(lo, unicode, true);
    if (hi > lo) body += (hi > lo + 1 ? '-' : '') + emitCodePoint(hi, unicode, true);
  }
  body += c.props.join('');
  if (!c.nonWord) return `[${c.negate ? '^' : ''}${body}]`;
  // Unicode \W joined with other members: an alternation; negated, a word char not in the rest.
  if (c.negate) return body ? `(?:(?![${body}])[\\p{L}\\p{N}_])` : '[\\p{L}\\p{N}_]';
  return body ? `(?:[${body}]|[^\\p{L}\\p{N}_])` : '[^\\p{L}\\p{N}_]';
}

/**
 * A JavaScript RegExp (`new RegExp(source, flags)`) whose `test()` answers as Python's
 * `re.search(pattern, s) is not None` does, or null when the pattern is invalid in Python or uses
 * a construct this translation does not express faithfully.
 */
export function translatePythonRegex(pattern: string): { source: string; flags: string } | null {
  let parsed: { ast: Node; parser: Parser };
  try {
    parsed = parsePython(pattern);
  } catch {
    return null;
  }
  const { ast, parser } = parsed;
  const flags = parser.state.flags;
  // `(?t)` (TEMPLATE) is undocumented and deprecated; not worth guessing its semantics.
  if (flags & FLAG_TEMPLATE) return null;
  let pieces: Piece[];
  try {
    pieces = new Translator(flags, parser.state.groupNames).node(ast, true);
  } catch (e) {
    if (e instanceof Unsupported || e instanceof RangeError) return null;
    throw e;
  }
  const unicode = pieces.some((p) => typeof p !== 'string' && classNeedsUnicode(p));
  let source = pieces.map((p) => (typeof p === 'string' ? p : emitClass(p, unicode))).join('');
  // Python has no position between the two halves of a surrogate pair, but JS may try one:
  // without `u` the search steps by code unit, and with `u` V8 still reports empty matches made
  // of look-behinds there. A match that consumes something cannot start there (no class emitted
  // without `u` matches a surrogate; with `u` V8 checks the first character read), so only
  // patterns that can match the empty string need a guard. Without `u` it is a plain "not
  // between a lead and a trail surrogate"; with `u` no class can see half a pair, and a leading
  // forward look-ahead is what makes V8 skip those positions (checked empirically on Node 20).
  if (parser.width(ast)[0] === 0 && !startsAnchored(ast, (flags & FLAG_MULTILINE) !== 0)) {
    const guard = unicode ? `(?=${ANY_UNIT}|$)` : '(?<![\\ud800-\\udbff](?=[\\udc00-\\udfff]))';
    source = `${guard}(?:${source})`;
  }
  return { source, flags: unicode ? 'u' : '' };
}

/** Whether every match must start at the start of the input (`\A`, or `^` without MULTILINE). */
function startsAnchored(ast: Node, multiline: boolean): boolean {
  if (ast.type !== 'seq' || ast.items.length === 0) return false;
  const first = ast.items[0];
  return first.type === 'at' && (first.anchor === 'bos' || (first.anchor === 'bol' && !multiline));
}
