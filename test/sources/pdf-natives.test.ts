/**
 * Loading the PDF pipeline leaves the engine's own `Array.prototype.push`, `JSON.stringify` and
 * `JSON.parse` in place (sources/pdf/natives.ts): pdf.js's legacy build and its worker code
 * replace them with core-js versions (JSON.stringify 15x slower in Node 20) for every caller
 * in the thread. What pdf.js adds that Node 20 lacks stays.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

// Taken before anything loads pdf.js: this file imports the pipeline only inside the test.
const native = { push: Array.prototype.push, stringify: JSON.stringify, parse: JSON.parse };

test('pdf.js loaded and a document read: push, JSON.stringify and JSON.parse are the engine’s own', async () => {
  const { openPdf, pageTextLayer } = await import('../../sources/pdf/pdfjs.ts');
  const same = () => ({
    push: Array.prototype.push === native.push,
    stringify: JSON.stringify === native.stringify,
    parse: JSON.parse === native.parse,
  });
  assert.deepEqual(same(), { push: true, stringify: true, parse: true });
  // Reading a document runs pdf.js's worker code in this thread (its fake worker).
  const doc = await openPdf(join(import.meta.dirname, '../../sources/examples/pdf/invoice.pdf'));
  try {
    const layer = await pageTextLayer(await doc.getPage(1));
    assert.ok(layer.boxes.length > 20, `${layer.boxes.length} boxes`);
  } finally {
    await doc.destroy();
  }
  assert.deepEqual(same(), { push: true, stringify: true, parse: true });
  // What pdf.js needs and Node 20 lacks is still there.
  assert.equal(typeof (Promise as { withResolvers?: unknown }).withResolvers, 'function');
  assert.equal(typeof (Uint8Array.prototype as { toHex?: unknown }).toHex, 'function');
});
