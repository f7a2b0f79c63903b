/**
 * pyregex: Python 3.11 `re` syntax checking and translation to JS RegExps.
 *
 * Every expected value below was produced with CPython 3.11 while writing this test
 * (`re.compile(p)` for the messages, `re.search(p, s) is not None` for the match lists); the test
 * itself does not run Python.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pythonRegexError, translatePythonRegex } from '../../src/core/pyregex.ts';

/** [pattern, Python's re.error message or null when re.compile succeeds] */
const COMPILE_CASES: [string, string | null][] = [
  ['', null],
  ['abc', null],
  ['^(a+)+$', null],
  ['(?<=ab)c', null],
  ['(?<!a{2})b', null],
  ['(?<=a|b)c', null],
  ['(?<=(?:ab){2})', null],
  ['(a)(?<=\\1)b', null],
  ['(?i)abc', null],
  ['(?im)^x$', null],
  ['(?x) a b # comment', null],
  ['(?a)\\w+', null],
  ['(?u)\\w', null],
  ['(?s:.)', null],
  ['(?-i:a)', null],
  ['(?x-i:a b)', null],
  ['[]a]', null],
  ['[^]a]', null],
  ['[a-]', null],
  ['[\\w-]', null],
  ['[\\b]', null],
  ['[\\x00-\\xff]', null],
  ['(a)\\1', null],
  ['(?P<year>\\d{4})-(?P=year)', null],
  ['\\100', null],
  ['\\0', null],
  ['\\08', null],
  ['\\012', null],
  ['x{,3}', null],
  ['x{a}', null],
  ['x{}', null],
  ['x{,}', null],
  ['x{ 1}', null],
  ['{', null],
  ['}', null],
  [']', null],
  ['(?>a)', null],
  ['a*+', null],
  ['a++', null],
  ['a?+', null],
  ['a{1,2}+', null],
  ['a*?', null],
  ['(?:)*', null],
  ['(?:^)*', null],
  ['(?=a)*', null],
  ['(a)(?(1)b|c)', null],
  ['(?P<name>a)(?(name)b)', null],
  ['(?#comment)(?i)x', null],
  ['\\N{EM DASH}', null],
  ['\\N{em dash}', null],
  ['\\x41\\u0041\\U00000041', null],
  ['\\U0010FFFF', null],
  ['\\-\\\xe9\\ ', null],
  ['(?P<\xe9>x)', null],
  ['(?P<_>x)', null],
  ['(?t)a', null],
  ['(unclosed', 'missing ), unterminated subpattern at position 0'],
  ['\\p{L}+', 'bad escape \\p at position 0'],
  ['(?<=a+)c', 'look-behind requires fixed-width pattern'],
  ['(?<=a|bc)', 'look-behind requires fixed-width pattern'],
  ['(?<=a*)', 'look-behind requires fixed-width pattern'],
  ['(?<=a{4294967294}a{10})', 'looks too much behind'],
  ['[z-a]', 'bad character range z-a at position 1'],
  ['a**', 'multiple repeat at position 2'],
  ['*a', 'nothing to repeat at position 0'],
  ['a*??', 'multiple repeat at position 3'],
  ['a+++', 'multiple repeat at position 3'],
  ['a{2}{3}', 'multiple repeat at position 4'],
  ['{1}', 'nothing to repeat at position 0'],
  ['^*', 'nothing to repeat at position 1'],
  ['\\b+', 'nothing to repeat at position 2'],
  ['(?:a|*)', 'nothing to repeat at position 5'],
  ['(?P<1a>x)', "bad character in group name '1a' at position 4"],
  ['(?P<a-b>x)', "bad character in group name 'a-b' at position 4"],
  ['(?P<>x)', 'missing group name at position 4'],
  ['(?P<a', 'missing >, unterminated name at position 4'],
  ['(?P<a>x)(?P<a>y)', "redefinition of group name 'a' as group 2; was group 1 at position 12"],
  ['(?P=a)', "unknown group name 'a' at position 4"],
  ['(?P<a>x(?P=a))', 'cannot refer to an open group at position 11'],
  ['a(?i)b', 'global flags not at the start of the expression at position 1'],
  ['(?i)|(?m)', 'global flags not at the start of the expression at position 5'],
  ['(?L)x', "bad inline flags: cannot use 'L' flag with a str pattern at position 3"],
  ['(?au)x', "bad inline flags: flags 'a', 'u' and 'L' are incompatible at position 4"],
  ['(?a)(?u)x', 'ASCII and UNICODE flags are incompatible'],
  ['(?i-i:a)', 'bad inline flags: flag turned on and off at position 5'],
  ['(?-a:x)', "bad inline flags: cannot turn off flags 'a', 'u' and 'L' at position 4"],
  ['(?t:x)', 'bad inline flags: cannot turn on global flag at position 3'],
  ['(?iq)', 'unknown flag at position 3'],
  ['(?-ix)', 'missing : at position 5'],
  ['(?i', 'missing -, : or ) at position 3'],
  ['(?', 'unexpected end of pattern at position 2'],
  ['\\d{2,1}', 'min repeat greater than max repeat at position 3'],
  ['a{4294967295}', 'the repetition number is too large'],
  ['\\8', 'invalid group reference 8 at position 1'],
  ['\\1(a)', 'invalid group reference 1 at position 1'],
  ['(a\\1)', 'cannot refer to an open group at position 2'],
  ['(a)\\18', 'invalid group reference 18 at position 4'],
  ['(a)\\10', 'invalid group reference 10 at position 4'],
  ['\\400', 'octal escape value \\400 outside of range 0-0o377 at position 0'],
  ['\\777', 'octal escape value \\777 outside of range 0-0o377 at position 0'],
  ['[\\400]', 'octal escape value \\400 outside of range 0-0o377 at position 1'],
  ['\\q', 'bad escape \\q at position 0'],
  ['[\\q]', 'bad escape \\q at position 1'],
  ['[\\A]', 'bad escape \\A at position 1'],
  ['[\\8]', 'bad escape \\8 at position 1'],
  ['\\x4', 'incomplete escape \\x4 at position 0'],
  ['\\u12', 'incomplete escape \\u12 at position 0'],
  ['\\U00110000', 'bad escape \\U00110000 at position 0'],
  ['\\', 'bad escape (end of pattern) at position 0'],
  ['a\\', 'bad escape (end of pattern) at position 1'],
  ['\\N', 'missing { at position 2'],
  ['\\N{}', 'missing character name at position 3'],
  ['\\N{x', 'missing }, unterminated name at position 3'],
  ['[', 'unterminated character set at position 0'],
  ['[a', 'unterminated character set at position 0'],
  ['[]', 'unterminated character set at position 0'],
  ['[^]', 'unterminated character set at position 0'],
  ['[a-', 'unterminated character set at position 0'],
  ['[\\d-z]', 'bad character range \\d-z at position 1'],
  ['[a-\\d]', 'bad character range a-\\d at position 1'],
  ['[\\x7a-\\x61]', 'bad character range \\x-\\x at position 5'],
  [')', 'unbalanced parenthesis at position 0'],
  ['a)', 'unbalanced parenthesis at position 1'],
  ['(?<n>x)', 'unknown extension ?<n at position 1'],
  ['(?Px)', 'unknown extension ?Px at position 1'],
  ['(?<x)', 'unknown extension ?<x at position 1'],
  ['\u{1f600}(', 'missing ), unterminated subpattern at position 1'],
  ['x\u{1f600}\\q', 'bad escape \\q at position 2'],
  ['(?(1)a|b|c)', 'conditional backref with more than two branches at position 8'],
  ['(?(2)a)(b)', 'invalid group reference 2 at position 3'],
  ['(?(0)a)', 'bad group number at position 3'],
  ['(?(a)x)', "unknown group name 'a' at position 3"],
  ['(?<=(a)\\1)', 'cannot refer to group defined in the same lookbehind subpattern at position 9'],
  ['(?#x', 'missing ), unterminated comment at position 0'],
  ['(?t)a*', 'internal: unsupported template operator MAX_REPEAT'],
  ['a\nb(', 'missing ), unterminated subpattern at position 3 (line 2, column 2)'],
  ['(?x) a # c\n (', 'missing ), unterminated subpattern at position 12 (line 2, column 2)'],
  ['\\N{Hello_World}', "undefined character name 'Hello_World' at position 0"],
];

/**
 * `\N{...}` names need Unicode's name table, which Node does not expose: any name made of
 * letters, digits, spaces and hyphens is accepted. [pattern, what Python says]
 */
const UNCHECKED_NAMES: [string, string][] = [
  ['\\N{DASH}', "undefined character name 'DASH' at position 0"],
  ['\\N{NOT A REAL NAME}', "undefined character name 'NOT A REAL NAME' at position 0"],
];

interface TranslationCase {
  pattern: string;
  /** The JS flags we expect: 'u' only when the translation needs it. */
  flags: string;
  /** Strings on which Python's re.search finds a match. */
  match: string[];
  /** Strings on which it does not. */
  noMatch: string[];
}

const TRANSLATION_CASES: TranslationCase[] = [
  {
    pattern: '^\\d{3}-\\d{4}$',
    flags: 'u',
    match: [
      '555-1234',
      '555-1234\n',
      '\u0663\u0663\u0663-\u0661\u0662\u0663\u0664',
      '\uff15\uff15\uff15-1234',
    ],
    noMatch: ['555-1234\n\n', '555-12345', 'x555-1234'],
  },
  {
    pattern: '^[A-Z]{2}$',
    flags: '',
    match: ['AB', 'AB\n'],
    noMatch: ['ab', 'ABC', 'A'],
  },
  {
    pattern: 'colou?r',
    flags: '',
    match: ['color', 'colour', 'my colours'],
    noMatch: ['colr'],
  },
  {
    pattern: '^\\w+$',
    flags: 'u',
    match: ['h\xe9llo_1', '\u65e5\u672c', '\xb2'],
    noMatch: ['hello world', 'a-b', '\u0301'],
  },
  {
    pattern: '\\s',
    flags: '',
    match: ['\xa0', '\x1c', '\x0b', '\u3000'],
    noMatch: ['a', '\u200b', '\u180e'],
  },
  {
    pattern: '^\\s*$',
    flags: '',
    match: ['', ' \t\n', '\u3000'],
    noMatch: ['\u200b', 'x'],
  },
  {
    pattern: '\\S',
    flags: 'u',
    match: ['a', '\u{1f600}'],
    noMatch: ['', ' '],
  },
  {
    pattern: '^.$',
    flags: 'u',
    match: ['\u{1f600}', 'a', '\r'],
    noMatch: ['\n', 'ab'],
  },
  {
    pattern: '(?s)^.$',
    flags: 'u',
    match: ['\n', 'a', '\u{1f600}'],
    noMatch: ['ab'],
  },
  {
    pattern: 'a.c',
    flags: 'u',
    match: ['abc', 'a\u{1f600}c'],
    noMatch: ['a\nc', 'a\u{1f600}\u{1f600}c'],
  },
  {
    pattern: '(?m)^b$',
    flags: '',
    match: ['a\nb\nc', 'b'],
    noMatch: ['ab', 'a\rb\rc', 'a\u2028b'],
  },
  {
    pattern: '^a$',
    flags: '',
    match: ['a', 'a\n'],
    noMatch: ['a\n\n', '\na', 'a\r'],
  },
  {
    pattern: '^$',
    flags: '',
    match: ['', '\n'],
    noMatch: ['\n\n', 'a'],
  },
  {
    pattern: '(?m)^$',
    flags: '',
    match: ['a\n', '\n\na'],
    noMatch: ['a'],
  },
  {
    pattern: '$',
    flags: '',
    match: ['', 'abc'],
    noMatch: [],
  },
  {
    pattern: 'a\\Z',
    flags: '',
    match: ['a', 'ba'],
    noMatch: ['a\n'],
  },
  {
    pattern: '\\Aa',
    flags: '',
    match: ['a'],
    noMatch: ['ba', 'b\na'],
  },
  {
    pattern: '(?m)\\Aa',
    flags: '',
    match: ['a'],
    noMatch: ['b\na'],
  },
  {
    pattern: '(?i)^k$',
    flags: '',
    match: ['k', 'K', '\u212a'],
    noMatch: ['x'],
  },
  {
    pattern: '(?i)^s$',
    flags: '',
    match: ['s', 'S', '\u017f'],
    noMatch: ['z'],
  },
  {
    pattern: '(?i)^i$',
    flags: '',
    match: ['i', 'I', '\u0130', '\u0131'],
    noMatch: ['j'],
  },
  {
    pattern: '(?i)^\u03c3$',
    flags: '',
    match: ['\u03c3', '\u03a3', '\u03c2'],
    noMatch: ['s'],
  },
  {
    pattern: '(?i)^\u01c5$',
    flags: '',
    match: ['\u01c4', '\u01c5', '\u01c6'],
    noMatch: ['d'],
  },
  {
    pattern: '(?i)^\xe9t\xe9$',
    flags: '',
    match: ['\xc9T\xc9', '\xe9t\xe9'],
    noMatch: ['ete'],
  },
  {
    pattern: '(?i)^[a-z]+$',
    flags: '',
    match: ['ABC', 'abc', '\u212a', '\u017f'],
    noMatch: ['123', '\xe9'],
  },
  {
    pattern: '(?i)^[^a]$',
    flags: 'u',
    match: ['b'],
    noMatch: ['A', 'a'],
  },
  {
    pattern: '(?ai)^[a-z]$',
    flags: '',
    match: ['K', 'k'],
    noMatch: ['\u212a', '\u0130'],
  },
  {
    pattern: '(?a)^\\w+$',
    flags: '',
    match: ['abc_1'],
    noMatch: ['\xe9', '\u0663'],
  },
  {
    pattern: '(?a)\\d',
    flags: '',
    match: ['3'],
    noMatch: ['\u0663', 'x'],
  },
  {
    pattern: '(?a)\\s',
    flags: '',
    match: [' ', '\x0b'],
    noMatch: ['\xa0', '\x1c'],
  },
  {
    pattern: '(?a)\\W',
    flags: 'u',
    match: ['\xe9', '!'],
    noMatch: ['a'],
  },
  {
    pattern: '\\bcat\\b',
    flags: 'u',
    match: ['a cat!', 'cat'],
    noMatch: ['concat', '\xe9cat', 'cat_'],
  },
  {
    pattern: '(?a)\\bcat\\b',
    flags: '',
    match: ['\xe9cat', 'cat'],
    noMatch: ['concat'],
  },
  {
    pattern: '\\B',
    flags: 'u',
    match: ['ab', ' '],
    noMatch: ['', 'a'],
  },
  {
    pattern: '(?P<year>\\d{4})-(?P=year)',
    flags: 'u',
    match: ['2020-2020', 'x1999-1999y'],
    noMatch: ['2020-2021'],
  },
  {
    pattern: '(a)\\1',
    flags: '',
    match: ['aa', 'baab'],
    noMatch: ['ab'],
  },
  {
    pattern: '(?P<\xe9>a)(?P=\xe9)',
    flags: '',
    match: ['aa'],
    noMatch: ['ab'],
  },
  {
    pattern: '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10',
    flags: '',
    match: ['abcdefghijj'],
    noMatch: ['abcdefghija0', 'abcdefghij'],
  },
  {
    pattern: '(a)\\1\\060',
    flags: '',
    match: ['aa0'],
    noMatch: ['a\x08', 'aa'],
  },
  {
    pattern: '^x{,3}y$',
    flags: '',
    match: ['y', 'xxxy'],
    noMatch: ['xxxxy', 'x{,3}y'],
  },
  {
    pattern: '^x{a}$',
    flags: '',
    match: ['x{a}'],
    noMatch: ['xa'],
  },
  {
    pattern: '^x{}$',
    flags: '',
    match: ['x{}'],
    noMatch: ['x'],
  },
  {
    pattern: '^a{2}$',
    flags: '',
    match: ['aa'],
    noMatch: ['a', 'aaa'],
  },
  {
    pattern: '^a{2,}$',
    flags: '',
    match: ['aa', 'aaaaa'],
    noMatch: ['a'],
  },
  {
    pattern: '^a{1,2}?$',
    flags: '',
    match: ['a', 'aa'],
    noMatch: ['aaa', ''],
  },
  {
    pattern: '^[]a]+$',
    flags: '',
    match: [']', 'a', ']a]'],
    noMatch: ['b'],
  },
  {
    pattern: '^[^]a]$',
    flags: 'u',
    match: ['b'],
    noMatch: [']', 'a'],
  },
  {
    pattern: '^[a-]$',
    flags: '',
    match: ['a', '-'],
    noMatch: ['b'],
  },
  {
    pattern: '^[\\w-]+$',
    flags: 'u',
    match: ['a-b_c'],
    noMatch: ['a b'],
  },
  {
    pattern: '(?x) a b  # comment\n c',
    flags: '',
    match: ['abc'],
    noMatch: ['a b c', 'ab c'],
  },
  {
    pattern: '(?x)[ ]\\ ',
    flags: '',
    match: ['  '],
    noMatch: ['x'],
  },
  {
    pattern: '^\\x41\\101\\u0041\\U00000041\\0$',
    flags: '',
    match: ['AAAA\x00'],
    noMatch: ['AAAA'],
  },
  {
    pattern: '\\t\\n\\r\\f\\v\\a',
    flags: '',
    match: ['\t\n\r\x0c\x0b\x07'],
    noMatch: ['\t\n\r'],
  },
  {
    pattern: '^[\\b]$',
    flags: '',
    match: ['\x08'],
    noMatch: ['b'],
  },
  {
    pattern: '\\$\\^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\\\/',
    flags: '',
    match: ['$^.*+?()[]{}|\\/'],
    noMatch: ['$^.*'],
  },
  {
    pattern: '\\U0001F600+',
    flags: 'u',
    match: ['\u{1f600}\u{1f600}'],
    noMatch: ['\ud83d', 'x'],
  },
  {
    pattern: '^[\u{1f600}-\u{1f602}]$',
    flags: 'u',
    match: ['\u{1f601}'],
    noMatch: ['a', '\ud83d'],
  },
  {
    pattern: '(?<=ab)c',
    flags: '',
    match: ['abc'],
    noMatch: ['xbc', 'c'],
  },
  {
    pattern: '(?<!a)b',
    flags: '',
    match: ['cb', 'b'],
    noMatch: ['ab'],
  },
  {
    pattern: 'a(?=b)',
    flags: '',
    match: ['ab'],
    noMatch: ['ac'],
  },
  {
    pattern: 'a(?!b)',
    flags: '',
    match: ['ac', 'a'],
    noMatch: ['ab'],
  },
  {
    pattern: '^(a+)+$',
    flags: '',
    match: ['aaaa'],
    noMatch: ['aaab', ''],
  },
  {
    pattern: 'a|',
    flags: '',
    match: ['x', ''],
    noMatch: [],
  },
  {
    pattern: '^(?:a|b)*$',
    flags: '',
    match: ['abba', ''],
    noMatch: ['abc'],
  },
  {
    pattern: '^[\\w.+-]+@[\\w-]+\\.[a-z]{2,}$',
    flags: 'u',
    match: ['j.doe+x@example.com', '\xfcser@d\xf6main.org'],
    noMatch: ['j@d.c', 'a b@c.de'],
  },
  {
    pattern: '^[^@]+@[^@]+$',
    flags: 'u',
    match: ['a@b', '\u{1f600}@x'],
    noMatch: ['a@@b'],
  },
  {
    pattern: '\\W',
    flags: 'u',
    match: ['!', '\u{1f600}'],
    noMatch: ['\xe9', 'a'],
  },
  {
    pattern: '^[^\\W\\d]$',
    flags: 'u',
    match: ['a', '_'],
    noMatch: ['1', '!'],
  },
  {
    pattern: '^[\\W\\d]$',
    flags: 'u',
    match: ['1', '!'],
    noMatch: ['a'],
  },
  {
    pattern: '^[^\\Wa]$',
    flags: 'u',
    match: ['b'],
    noMatch: ['a', '!'],
  },
  {
    pattern: '^\\D$',
    flags: 'u',
    match: ['a', '\u{1f600}'],
    noMatch: ['\u0663'],
  },
  {
    pattern: '^[\\d\\s]+$',
    flags: 'u',
    match: ['1 2'],
    noMatch: ['1a'],
  },
  {
    pattern: '^\\d+(\\.\\d+)?$',
    flags: 'u',
    match: ['3.14', '42'],
    noMatch: ['3.'],
  },
  {
    pattern: '(?<!x)(?<!^)(?!$)',
    flags: '',
    match: ['ab'],
    noMatch: ['\u{1f600}', ''],
  },
  {
    pattern: '(?<![\xe9\u{1f600}])(?<!^)(?!$)',
    flags: 'u',
    match: ['ab'],
    noMatch: ['\xe9\u{1f600}', '\xe9\u{1f600}S'],
  },
  {
    pattern: '(?<!\\b)',
    flags: 'u',
    match: [''],
    noMatch: ['\xe9\u{1f600}S', 'a'],
  },
  {
    pattern: 'a/b',
    flags: '',
    match: ['a/b'],
    noMatch: ['ab'],
  },
  {
    pattern: '^-?\\d+$',
    flags: 'u',
    match: ['-12'],
    noMatch: ['12-'],
  },
  {
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?Z?$',
    flags: 'u',
    match: ['2024-01-02T03:04:05Z', '2024-01-02T03:04'],
    noMatch: ['2024-1-02T03:04'],
  },
];

/** [pattern, exact JS source] for a few representative translations. */
const SOURCES: [string, string][] = [
  ['^\\d{3}-\\d{4}$', '^\\p{Nd}{3}-\\p{Nd}{4}(?=\\n?$)'],
  ['^[A-Z]{2}$', '^[A-Z]{2}(?=\\n?$)'],
  [
    '\\s',
    '[\\u0009-\\u000d\\u001c- \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]',
  ],
  ['^.$', '^[^\\u{a}](?=\\n?$)'],
  ['(?m)^b$', '(?<![^\\n])b(?![^\\n])'],
  ['$', '(?<![\\ud800-\\udbff](?=[\\udc00-\\udfff]))(?:(?=\\n?$))'],
  ['(?i)^k$', '^[Kk\\u212a](?=\\n?$)'],
  ['(?ai)^[a-z]$', '^[A-Za-z](?=\\n?$)'],
  [
    '(?a)\\bcat\\b',
    '(?:(?<=[0-9A-Z_a-z])(?![0-9A-Z_a-z])|(?<![0-9A-Z_a-z])(?=[0-9A-Z_a-z]))cat(?:(?<=[0-9A-Z_a-z])(?![0-9A-Z_a-z])|(?<![0-9A-Z_a-z])(?=[0-9A-Z_a-z]))',
  ],
  ['(?P<year>\\d{4})-(?P=year)', '(?<year>\\p{Nd}{4})-\\k<year>'],
  ['(?P<\xe9>a)(?P=\xe9)', '(a)(?:\\1)'],
  ['(a)\\1\\060', '(a)(?:\\1)0'],
  ['^x{,3}y$', '^x{0,3}y(?=\\n?$)'],
  ['^x{a}$', '^x\\{a\\}(?=\\n?$)'],
  ['(?x) a b  # comment\n c', 'abc'],
  ['^[\\W\\d]$', '^(?:[\\p{Nd}]|[^\\p{L}\\p{N}_])(?=\\n?$)'],
  ['^[^\\Wa]$', '^(?:(?![a])[\\p{L}\\p{N}_])(?=\\n?$)'],
  ['\\U0001F600+', '\\u{1f600}+'],
  ['a/b', 'a\\/b'],
  ['(?<![\xe9\u{1f600}])(?<!^)(?!$)', '(?=[\\s\\S]|$)(?:(?<![\\u{e9}\\u{1f600}])(?<!^)(?!(?=\\n?$)))'],
];

/** Patterns with no translation: valid ones using constructs JS cannot express faithfully, and two invalid ones. */
const UNTRANSLATED: string[] = [
  '(?>a)',
  'a*+',
  'a++',
  'a?+',
  'a{1,2}+',
  '(a)?(?(1)b|c)',
  '(?i:a)',
  '(?-i:a)',
  '(?x:a b)',
  '\\N{EM DASH}',
  '[\\N{EM DASH}]',
  '(a)?\\1',
  '(a)|\\1',
  '(?:(a)|b)+\\1',
  '(?=(a))\\1',
  '(?i)(a)\\1',
  '(?t)a',
  '(',
  '(?ai)[a-\\U00010400]',
  'a**',
];

const show = (s: string) => JSON.stringify(s);

describe('pythonRegexError', () => {
  it('agrees with re.compile on every pattern of the table', () => {
    for (const [pattern, expected] of COMPILE_CASES) {
      assert.equal(pythonRegexError(pattern), expected, `pattern ${show(pattern)}`);
    }
  });

  it('covers 138 patterns, 56 of them valid', () => {
    assert.equal(COMPILE_CASES.length, 138);
    assert.equal(COMPILE_CASES.filter(([, e]) => e === null).length, 56);
  });

  it('accepts \\N{...} names it cannot look up', () => {
    for (const [pattern, python] of UNCHECKED_NAMES) {
      assert.equal(pythonRegexError(pattern), null, `pattern ${show(pattern)} (Python: ${python})`);
    }
  });

  it('handles nesting as deep as Python does', () => {
    assert.equal(pythonRegexError('('.repeat(100) + 'a' + ')'.repeat(100)), null);
    assert.equal(pythonRegexError('('.repeat(100)), 'missing ), unterminated subpattern at position 99');
  });
});

describe('translatePythonRegex', () => {
  it('gives Python search semantics for every case of the table', () => {
    for (const c of TRANSLATION_CASES) {
      const t = translatePythonRegex(c.pattern);
      assert.notEqual(t, null, `pattern ${show(c.pattern)}`);
      if (!t) continue;
      assert.equal(t.flags, c.flags, `flags for ${show(c.pattern)} -> ${t.source}`);
      const re = new RegExp(t.source, t.flags);
      for (const s of c.match)
        assert.equal(re.test(s), true, `${show(c.pattern)} -> /${t.source}/${t.flags} on ${show(s)}`);
      for (const s of c.noMatch)
        assert.equal(re.test(s), false, `${show(c.pattern)} -> /${t.source}/${t.flags} on ${show(s)}`);
    }
  });

  it('covers 79 patterns and 267 strings', () => {
    assert.equal(TRANSLATION_CASES.length, 79);
    assert.equal(
      TRANSLATION_CASES.reduce((n, c) => n + c.match.length + c.noMatch.length, 0),
      267,
    );
  });

  it('produces these exact sources', () => {
    for (const [pattern, source] of SOURCES) {
      assert.equal(translatePythonRegex(pattern)?.source, source, `pattern ${show(pattern)}`);
    }
  });

  it('returns null for constructs it does not express', () => {
    for (const pattern of UNTRANSLATED)
      assert.equal(translatePythonRegex(pattern), null, `pattern ${show(pattern)}`);
  });

  it('returns a compilable RegExp or null for every pattern of the compile table', () => {
    let translated = 0;
    for (const [pattern, error] of COMPILE_CASES) {
      const t = translatePythonRegex(pattern);
      if (error !== null) {
        assert.equal(t, null, `invalid pattern ${show(pattern)}`);
        continue;
      }
      if (!t) continue;
      translated++;
      assert.doesNotThrow(
        () => new RegExp(t.source, t.flags),
        `pattern ${show(pattern)} -> /${t.source}/${t.flags}`,
      );
    }
    assert.equal(translated, 43);
  });
});
