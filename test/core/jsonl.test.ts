/**
 * The JSONL readers: line numbers, Python's blank-line and newline rules, chunk boundaries, and
 * the lossless parser's int/float distinction and error positions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseLine, primeLineParser, readLines, readLinesSync } from '../../src/core/jsonl.ts';
import { dumpsPy, JsonSyntaxError, parsePyJson, sortCodePoints } from '../../src/core/pyjson.ts';
import { SCORING_SKIP_KEYS, SCORING_SPAN_KEYS } from '../../src/core/record.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-jsonl-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

async function both(content: string | Buffer) {
  const f = join(tmp, `f${Math.random()}.jsonl`);
  writeFileSync(f, content);
  const a: [number, string][] = [];
  for await (const l of readLines(f)) a.push([l.line, l.text]);
  const b = [...readLinesSync(f)].map((l) => [l.line, l.text] as [number, string]);
  return { a, b };
}

test('line numbers count blank lines; CRLF, lone CR and a BOM are handled alike by both readers', async () => {
  const { a, b } = await both('\ufeff{"a":1}\r\n\r\n  \n{"b":2}\r{"c":3}\n\u3000\n{"d":4}');
  const expected: [number, string][] = [
    [1, '{"a":1}'],
    [4, '{"b":2}'],
    [5, '{"c":3}'],
    [7, '{"d":4}'],
  ];
  assert.deepEqual(b, expected);
  assert.deepEqual(a, expected);
});

test('multi-byte characters and CRLF across the 1 MB chunk boundary survive', async () => {
  const pad = 'x'.repeat((1 << 20) - 3);
  const { a, b } = await both(Buffer.from(`"${pad}é"\r\n"ü€"\n`, 'utf8'));
  assert.equal(b.length, 2);
  assert.equal(b[0][1].length, pad.length + 3);
  assert.equal(b[0][1].endsWith('é"'), true);
  assert.deepEqual(b[1], [2, '"ü€"']);
  assert.deepEqual(a, b);
});

test('ints and floats keep their lexeme; NaN and Infinity parse as Python does', () => {
  const v = parsePyJson(
    '{"i": 1, "f": 1.0, "e": 1e3, "big": 123456789012345678901234567890, "n": NaN, "inf": -Infinity}',
  );
  assert.ok(v instanceof Map);
  assert.equal(v.get('i'), 1n);
  assert.equal(v.get('f'), 1);
  assert.equal(v.get('e'), 1000);
  assert.equal(v.get('big'), 123456789012345678901234567890n);
  assert.ok(Number.isNaN(v.get('n') as number));
  assert.equal(v.get('inf'), Number.NEGATIVE_INFINITY);
  assert.equal(
    dumpsPy(v),
    '{"i": 1, "f": 1.0, "e": 1000.0, "big": 123456789012345678901234567890, "n": NaN, "inf": -Infinity}',
  );
});

test('a repeated key keeps its first place and takes the last value, as a Python dict', () => {
  const v = parsePyJson('{"a": 1, "b": 2, "a": 3}') as Map<string, unknown>;
  assert.deepEqual(
    [...v.entries()],
    [
      ['a', 3n],
      ['b', 2n],
    ],
  );
});

test('syntax errors name the column; raw control characters in strings are rejected', () => {
  assert.throws(
    () => parsePyJson('{"a": 1,}'),
    (e: unknown) => e instanceof JsonSyntaxError && /column 9/.test(e.message),
  );
  assert.throws(() => parsePyJson('"a\tb"'), /control character/);
  assert.throws(() => parsePyJson('[1] x'), /Extra data/);
  const bad = parseLine({ line: 7, text: '{"broken": ' });
  assert.equal(bad.ok, false);
  assert.equal(bad.line, 7);
});

test('ensure_ascii output matches Python: lowercase \\u escapes, surrogate pairs, DEL kept', () => {
  assert.equal(dumpsPy('é\u007f😀\n'), '"\\u00e9\u007f\\ud83d\\ude00\\n"');
  assert.equal(dumpsPy(['x'], { indent: 2 }), '[\n  "x"\n]');
});

test('skipped context strings are checked as JSON but not decoded', () => {
  const spans = { keys: new Set<string>(), out: new Map<string, string>(), skip: new Set(['input.context']) };
  const ok = parsePyJson(
    '{"input": {"context": "a\\\\x \\u00e9 \\"q\\"", "question": "kept"}}',
    spans,
  ) as Map<string, Map<string, unknown>>;
  assert.equal(ok.get('input')!.get('context'), '');
  assert.equal(ok.get('input')!.get('question'), 'kept');
  // The same errors JSON.parse (and Python) report: a bad escape, a raw control character.
  assert.throws(() => parsePyJson('{"input": {"context": "a\\x"}}', spans), /Invalid string escape/);
  assert.throws(() => parsePyJson('{"input": {"context": "a\\\\\\x"}}', spans), /Invalid string escape/);
  assert.throws(() => parsePyJson('{"input": {"context": "tab\there"}}', spans), /control character/);
});

test('the parser priming a scoring worker runs at start parses each of its lines, spans and skips included', () => {
  // A priming line that no longer parsed would stop every worker before its first file.
  primeLineParser(SCORING_SPAN_KEYS, SCORING_SKIP_KEYS);
  const spans = new Map<string, string>();
  const v = parsePyJson(
    '{"input": {"context": {"k": []}, "json_schema": {"a": -1.5e-3}}, "output": {"candidate_response": []}}',
    { keys: SCORING_SPAN_KEYS, out: spans, skip: SCORING_SKIP_KEYS },
  );
  // A skipped context comes back as null; a spanned schema keeps its raw text.
  assert.equal(
    dumpsPy(v),
    '{"input": {"context": null, "json_schema": null}, "output": {"candidate_response": []}}',
  );
  assert.equal(spans.get('input.json_schema'), '{"a": -1.5e-3}');
});

test('sortCodePoints orders as Python sorts str: code points, astral characters after U+E000-U+FFFF', () => {
  let seed = 3;
  const rnd = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const alphabet = [
    'a',
    'B',
    '.',
    '[',
    '0',
    '\u00e9',
    '\u4e2d',
    '\ue000',
    '\uffff',
    '\u{1f600}',
    '\u{10000}',
  ];
  for (let t = 0; t < 300; t++) {
    // Half the lists with astral characters (surrogate pairs), half without.
    const chars = t % 2 === 0 ? alphabet.slice(0, 9) : alphabet;
    const xs = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () =>
      Array.from({ length: Math.floor(rnd() * 4) }, () => chars[Math.floor(rnd() * chars.length)]).join(''),
    );
    const byCodePoint = [...xs].sort((a, b) => {
      const ca = [...a].map((c) => c.codePointAt(0)!);
      const cb = [...b].map((c) => c.codePointAt(0)!);
      for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i] - cb[i];
      return ca.length - cb.length;
    });
    assert.deepEqual(sortCodePoints([...xs]), byCodePoint, JSON.stringify(xs));
  }
});

/** Lines as Python reads them, from the whole file decoded at once (the readers' contract). */
function referenceLines(bytes: Buffer): [number, string][] {
  const text = new TextDecoder('utf-8').decode(bytes);
  const isWs = (ch: string) => ch !== '\ufeff' && /[\s\x1c-\x1f\x85]/.test(ch);
  const out: [number, string][] = [];
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    // The text after the last newline is a line only when there is any.
    if (i === text.split(/\r\n|\r|\n/).length - 1 && raw === '') return;
    let s = i === 0 && raw.startsWith('\ufeff') ? raw.slice(1) : raw;
    let a = 0;
    let b = s.length;
    while (a < b && isWs(s[a])) a++;
    while (b > a && isWs(s[b - 1])) b--;
    s = s.slice(a, b);
    if (s.length > 0) out.push([i + 1, s]);
  });
  return out;
}

test('readLinesSync decodes 64 KB chunks as one UTF-8 stream: cut sequences, invalid bytes, BOMs, all newlines', () => {
  let seed = 17;
  const rnd = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const pieces: Buffer[] = [
    Buffer.from('{"a": "plain ascii text"}'),
    Buffer.from('\n'),
    Buffer.from('\r\n'),
    Buffer.from('\r'),
    Buffer.from('é'), // 2 bytes
    Buffer.from('中'), // 3 bytes
    Buffer.from('😀'), // 4 bytes
    Buffer.from([0x80]), // a lone continuation byte
    Buffer.from([0xe2, 0x82]), // a cut 3-byte sequence
    Buffer.from([0xf0, 0x9f, 0x98]), // a cut 4-byte sequence
    Buffer.from([0xc0, 0xff]), // bytes UTF-8 never has
    Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
    Buffer.from('\ufeff'),
    Buffer.from('\u0085 \x1c'),
  ];
  for (let f = 0; f < 30; f++) {
    const parts: Buffer[] = f % 3 === 0 ? [Buffer.from('\ufeff')] : [];
    let size = 0;
    const target = 60_000 + Math.floor(rnd() * 140_000);
    while (size < target) {
      // Mostly text, so lines are long enough to cross a chunk's end now and then.
      const p = rnd() < 0.6 ? pieces[0] : pieces[1 + Math.floor(rnd() * (pieces.length - 1))];
      parts.push(p);
      size += p.length;
    }
    const bytes = Buffer.concat(parts);
    const file = join(tmp, `utf8-${f}.jsonl`);
    writeFileSync(file, bytes);
    const got = [...readLinesSync(file)].map((l): [number, string] => [l.line, l.text]);
    assert.deepEqual(got, referenceLines(bytes), `file ${f} (${bytes.length} bytes)`);
  }
  // Two byte order marks: the decoder drops the first, the reader the second (as before).
  const twice = join(tmp, 'two-boms.jsonl');
  writeFileSync(twice, Buffer.from('\ufeff\ufeff{"a": 1}\n'));
  assert.deepEqual(
    [...readLinesSync(twice)].map((l) => l.text),
    ['{"a": 1}'],
  );
  // A 4-byte character across the 64 KB boundary at each of its three inner positions, and a file
  // ending in a cut sequence.
  for (const at of [65533, 65534, 65535]) {
    const bytes = Buffer.concat([Buffer.alloc(at, 0x61), Buffer.from('😀\nb\n'), Buffer.from([0xe2, 0x82])]);
    const file = join(tmp, `cut-${at}.jsonl`);
    writeFileSync(file, bytes);
    assert.deepEqual(
      [...readLinesSync(file)].map((l): [number, string] => [l.line, l.text]),
      referenceLines(bytes),
    );
  }
});
