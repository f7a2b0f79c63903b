/**
 * What `sob build pdf`'s page attachments cost: each bundled example page (sources/examples/pdf,
 * four US Letter pages) rendered by pdf.js at 72, 150 (the default `--render-dpi`) and 300 dpi,
 * as `sob build pdf` renders it; per dpi the pixel size, the PNG's bytes per page (the bytes a
 * benchmark folder stores and a request carries, before base64) and the CPU time per page as a
 * ratio to the 72 dpi render measured in the same run (the machine is shared: ratios, not seconds).
 * The one-page PDF itself is stored as it is (its bytes are listed too).
 *
 *   node --import tsx bench/page-renders.ts [--runs 3]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPdfData, renderPagePng } from '../sources/pdf/pdfjs.ts';

const ROOT = join(import.meta.dirname, '..');
const NAMES = ['invoice', 'article', 'report', 'scan'];
const DPIS = [72, 150, 300];
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const rows: string[] = [];
const perDpi = new Map<number, { ms: number[]; bytes: number[]; size: string }>();
for (const dpi of DPIS) perDpi.set(dpi, { ms: [], bytes: [], size: '' });
for (const name of NAMES) {
  const data = readFileSync(join(ROOT, 'sources/examples/pdf', `${name}.pdf`));
  rows.push(`${name}.pdf: ${data.length.toLocaleString('en-US')} bytes as stored`);
  for (let r = 0; r < runs; r++)
    for (const dpi of DPIS) {
      const doc = await openPdfData(new Uint8Array(data));
      const page = await doc.getPage(1);
      const t = cpuMs();
      const png = await renderPagePng(doc, page, (dpi / 72) * (1 - 1e-9));
      const ms = cpuMs() - t;
      await doc.destroy();
      const m = perDpi.get(dpi)!;
      m.ms.push(ms);
      if (r === 0) m.bytes.push(png.length);
      m.size = `${png.readUInt32BE(16)} x ${png.readUInt32BE(20)}`;
    }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(perDpi.get(72)!.ms);
process.stdout.write(`${rows.join('\n')}\n\ndpi  px           PNG bytes/page (mean of 4)  CPU vs 72 dpi\n`);
for (const dpi of DPIS) {
  const m = perDpi.get(dpi)!;
  const mean = m.bytes.reduce((a, b) => a + b, 0) / m.bytes.length;
  process.stdout.write(
    `${String(dpi).padEnd(4)} ${m.size.padEnd(12)} ${Math.round(mean).toLocaleString('en-US').padEnd(27)} ${(median(m.ms) / base).toFixed(2)}x (median ${median(m.ms).toFixed(0)} ms CPU)\n`,
  );
}
