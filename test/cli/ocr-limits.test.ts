/**
 * `sob ocr` on inputs made to exhaust it (issue 21, findings 8 and 9): an image declaring more
 * pixels than `--max-pixels` is never decoded (a 30,000 px square PNG of under 1 MB, a PDF
 * holding one 20,000 px square image), and a PDF pdf.js fails on (a circular page tree, arrays
 * nested 100,000 deep) is named while the PDFs around it are still transcribed. The real
 * command in a child process; its peak memory is read by a preload that prints
 * `process.resourceUsage().maxRSS` on exit.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createDeflate } from 'node:zlib';
import { TABLE_ROWS, tablePdf } from '../sources/pdf-fixtures.ts';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'ocr-limits-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Prints the process's peak resident memory (kB) on stderr as it exits. */
const PEAK =
  'data:text/javascript,process.on("exit",()=>process.stderr.write("peak-rss-kb "+process.resourceUsage().maxRSS+"\\n"))';

interface Run {
  code: number;
  stderr: string;
  seconds: number;
  peakMb: number;
}

function sob(args: string[], timeoutMs = 170_000): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', PEAK, join(ROOT, 'bin/sob.js'), ...args],
      { cwd: tmp, timeout: timeoutMs, maxBuffer: 1 << 26 },
      (err, _stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        const kb = Number(/peak-rss-kb (\d+)/.exec(stderr)?.[1] ?? Number.NaN);
        resolve({ code, stderr, seconds: (performance.now() - started) / 1000, peakMb: kb / 1024 });
      },
    );
  });
}

// biome-ignore lint/suspicious/noExplicitAny: JSON lines read back and checked field by field
const jsonLines = (file: string): any[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** A PDF from its objects' bodies (object 1 is the catalog), with a correct xref table. */
function rawPdf(objs: (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let at = parts[0].length;
  const offsets: number[] = [];
  objs.forEach((body, i) => {
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    offsets.push(at);
    at += b.length;
    parts.push(b);
  });
  const xref = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((x) => `${String(x).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(
    Buffer.from(`${xref}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`),
  );
  return Buffer.concat(parts);
}

const stream = (dict: string, data: Buffer) =>
  Buffer.concat([
    Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`),
    data,
    Buffer.from('\nendstream'),
  ]);

/** `rows` rows of `rowBytes` zero bytes, each after a PNG filter byte (0), deflated as a stream. */
async function deflatedZeros(rows: number, rowBytes: number, pngFilter: boolean): Promise<Buffer> {
  const z = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  z.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => z.on('end', resolve));
  const row = Buffer.alloc(rowBytes + (pngFilter ? 1 : 0));
  for (let i = 0; i < rows; i++) if (!z.write(row)) await new Promise((r) => z.once('drain', r));
  z.end();
  await done;
  return Buffer.concat(chunks);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A black 8-bit grey PNG of `side` x `side` pixels: under 1 MB on disk for 30,000, `side`^2 bytes decoded (4 x that as RGBA). */
async function hugePng(side: number): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 8; // bits per channel
  ihdr[9] = 0; // grey
  const idat = await deflatedZeros(side, side, true);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** One page drawn with one `side` x `side` grey image (deflated zeros). */
async function hugeImagePdf(side: number): Promise<Buffer> {
  const content = 'q 612 0 0 792 0 0 cm /Im1 Do Q';
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>',
    stream('', Buffer.from(content)),
    stream(
      `/Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`,
      await deflatedZeros(side, side, false),
    ),
  ]);
}

const HELLO = 'BT /F1 24 Tf 72 700 Td (A page behind a broken page tree) Tj ET';
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/** Two pages listed, the second "page" being the page tree itself: pdf.js reads page 2 as a loop. */
function circularPdf(): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    stream('', Buffer.from(HELLO)),
    FONT,
  ]);
}

/** A page dictionary holding arrays nested 100,000 deep (pdf.js's parser recurses into each). */
function nestedPdf(): Buffer {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> /Junk ${deep} >>`,
    stream('', Buffer.from(HELLO)),
    FONT,
  ]);
}

/**
 * Two pages: the first draws a form that draws the next form twice, `depth` forms deep, so pdf.js
 * parses 2^depth leaf forms for it (measured on this machine: depth 16 takes 10 s and 730 MB,
 * each level doubling both; depth 20 would be minutes and gigabytes); the second is one line of text.
 */
function nestedFormsPdf(depth: number): Buffer {
  const objs: (string | Buffer)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /XObject << /X 8 0 R >> >> >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R /Resources << /Font << /F1 7 0 R >> >> >>',
    stream('', Buffer.from('q /X Do Q')),
    stream('', Buffer.from(HELLO)),
    FONT,
  ];
  // Object 8 + i is form i; each draws form i + 1 twice, the last draws one line.
  for (let i = 0; i < depth; i++)
    objs.push(
      stream(
        `/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /X ${9 + i} 0 R >> >>`,
        Buffer.from('/X Do /X Do'),
      ),
    );
  objs.push(stream('/Type /XObject /Subtype /Form /BBox [0 0 612 792]', Buffer.from('10 10 m 100 100 l S')));
  return rawPdf(objs);
}

let table: Uint8Array;
before(async () => {
  table = await tablePdf();
});

describe('sob ocr --max-pixels: no image decoded over the cap', () => {
  test('a 30000x30000 PNG (under 1 MB) is skipped with its size named, within --page-timeout + 10 s and under 1.5 GB peak RSS', async () => {
    const png = await hugePng(30_000);
    assert.ok(png.length < 1_000_000, `${png.length} bytes`);
    const file = join(tmp, 'huge.png');
    writeFileSync(file, png);
    const out = join(tmp, 'out-png');
    const r = await sob(['ocr', file, '--out', out, '--no-cache', '--workers', '1', '--page-timeout', '20']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.seconds < 30, `${r.seconds.toFixed(1)} s`);
    assert.ok(r.peakMb < 1536, `peak RSS ${r.peakMb.toFixed(0)} MB`);
    assert.match(
      r.stderr,
      /huge\.png: page 1 skipped: the image is over --max-pixels \(30000 x 30000 px = 900,000,000 pixels; the cap is 69,605,736\), not decoded/,
    );
    assert.deepEqual(jsonLines(join(out, 'ocr_pages.jsonl')), [
      {
        format_version: 1,
        pdf: 'huge.png',
        page: 1,
        skipped:
          'the image is over --max-pixels (30000 x 30000 px = 900,000,000 pixels; the cap is 69,605,736), not decoded',
      },
    ]);
  });

  test('a PDF drawn with one 20000x20000 image: the page is skipped with the image named, within --page-timeout + 10 s and under 1.5 GB peak RSS; a lower --max-pixels skips a small scan too', async () => {
    const pdf = await hugeImagePdf(20_000);
    assert.ok(pdf.length < 1_000_000, `${pdf.length} bytes`);
    const dir = join(tmp, 'huge-pdf');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'huge.pdf'), pdf);
    writeFileSync(join(dir, 'table.pdf'), table);
    const out = join(tmp, 'out-huge-pdf');
    const r = await sob(['ocr', dir, '--out', out, '--no-cache', '--workers', '1', '--page-timeout', '20']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.seconds < 30, `${r.seconds.toFixed(1)} s`);
    assert.ok(r.peakMb < 1536, `peak RSS ${r.peakMb.toFixed(0)} MB`);
    const why =
      'nothing else to read on it: an image over --max-pixels (20000 x 20000 px = 400,000,000 pixels; the cap is 69,605,736) left out undecoded';
    assert.ok(r.stderr.includes(`huge.pdf: page 1 skipped: ${why}`), r.stderr);
    const pages = jsonLines(join(out, 'ocr_pages.jsonl')).sort((a, b) => a.pdf.localeCompare(b.pdf));
    assert.deepEqual(
      pages.map((p) => [p.pdf, p.page, p.skipped ?? p.method]),
      [
        ['huge.pdf', 1, why],
        ['table.pdf', 1, 'text-layer'],
      ],
    );
    // The cap is the user's: 1,000 x 1,000 px is over a cap of 999,999.
    const small = await hugeImagePdf(1000);
    writeFileSync(join(tmp, 'small.pdf'), small);
    const s = await sob([
      'ocr',
      join(tmp, 'small.pdf'),
      '--out',
      join(tmp, 'out-small'),
      '--max-pixels',
      '999999',
    ]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(
      s.stderr,
      /page 1 skipped: nothing else to read on it: an image over --max-pixels \(1000 x 1000 px = 1,000,000 pixels; the cap is 999,999\)/,
    );
  });
});

describe('sob ocr: one bad PDF among good ones', () => {
  test('a circular page tree and arrays nested 100,000 deep are named, the PDFs before and after are transcribed, exit 1 naming both', async () => {
    const dir = join(tmp, 'bad-among-good');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a-table.pdf'), table);
    writeFileSync(join(dir, 'b-circular.pdf'), circularPdf());
    writeFileSync(join(dir, 'c-nested.pdf'), nestedPdf());
    writeFileSync(join(dir, 'd-table.pdf'), table);
    writeFileSync(join(dir, 'e-table.pdf'), table);
    const out = join(tmp, 'out-bad');
    // One worker: the PDFs are read two at a time, so the ones after the bad ones wait for them.
    const r = await sob(['ocr', dir, '--out', out, '--no-cache', '--workers', '1']);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.seconds < 120, `${r.seconds.toFixed(1)} s`);
    assert.match(r.stderr, /b-circular\.pdf: failed while reading: Pages tree contains circular reference/);
    assert.match(r.stderr, /c-nested\.pdf: failed while reading: Maximum call stack size exceeded/);
    const last = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('peak-rss-kb'))
      .at(-1);
    assert.equal(
      last,
      `sob: 2 of 5 inputs failed while being read: b-circular.pdf, c-nested.pdf (see ${join(out, 'ocr_pages.jsonl')}); the others were transcribed`,
    );
    for (const f of ['a-table_pg1.md', 'd-table_pg1.md', 'e-table_pg1.md']) {
      const md = readFileSync(join(out, f), 'utf8');
      for (const row of TABLE_ROWS) assert.ok(md.includes(row[0]), `${f}: no ${row[0]}`);
    }
    const pages = jsonLines(join(out, 'ocr_pages.jsonl')).sort((a, b) => a.pdf.localeCompare(b.pdf));
    assert.deepEqual(
      pages.map((p) => [p.pdf, p.page, p.skipped?.split(':')[0] ?? p.method]),
      [
        ['a-table.pdf', 1, 'text-layer'],
        ['b-circular.pdf', null, 'failed while reading'],
        ['c-nested.pdf', null, 'failed while reading'],
        ['d-table.pdf', 1, 'text-layer'],
        ['e-table.pdf', 1, 'text-layer'],
      ],
    );
  });
});

describe('sob ocr --page-timeout: the page timer ends the pdf.js work it times out', () => {
  test('a page pdf.js would parse for minutes (forms drawn within forms, 20 deep) is skipped within --page-timeout + 10 s and under 1.5 GB peak RSS; the page after it and the next PDF are transcribed', async () => {
    const dir = join(tmp, 'slow-page');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a-slow.pdf'), nestedFormsPdf(20));
    writeFileSync(join(dir, 'b-table.pdf'), table);
    const out = join(tmp, 'out-slow');
    // Without the thread being ended, pdf.js runs on well past the child's 60 s limit.
    const r = await sob(
      ['ocr', dir, '--out', out, '--no-cache', '--workers', '1', '--page-timeout', '3', '--ocr', 'never'],
      60_000,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.seconds < 13, `${r.seconds.toFixed(1)} s`);
    assert.ok(r.peakMb < 1536, `peak RSS ${r.peakMb.toFixed(0)} MB`);
    assert.match(r.stderr, /a-slow\.pdf: page 1 skipped: took longer than the time per page \(3 s\)/);
    const pages = jsonLines(join(out, 'ocr_pages.jsonl')).sort(
      (a, b) => a.pdf.localeCompare(b.pdf) || a.page - b.page,
    );
    assert.deepEqual(
      pages.map((p) => [p.pdf, p.page, p.skipped ?? p.method]),
      [
        ['a-slow.pdf', 1, 'took longer than the time per page (3 s)'],
        ['a-slow.pdf', 2, 'text-layer'],
        ['b-table.pdf', 1, 'text-layer'],
      ],
    );
    assert.equal(readFileSync(join(out, 'a-slow_pg2.md'), 'utf8'), 'A page behind a broken page tree\n');
    const md = readFileSync(join(out, 'b-table_pg1.md'), 'utf8');
    for (const row of TABLE_ROWS) assert.ok(md.includes(row[0]), `no ${row[0]}`);
  });
});
