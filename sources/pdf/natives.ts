/**
 * The JavaScript engine's own `Array.prototype.push`, `JSON.stringify` and `JSON.parse`, kept
 * before pdf.js loads. pdf.js's legacy build (the one that runs in Node 20) carries core-js
 * polyfills that replace them for the whole thread with JavaScript versions, for edge cases
 * nothing here meets (a push onto an array whose length is read-only, `JSON.rawJSON`):
 * measured in Node 20, `JSON.stringify` 15x slower and `push` 2.2x slower for every caller, not
 * only pdf.js. `restoreNatives` puts the engine's own back once pdf.js and its worker module are
 * loaded (`pdfjs.ts`); the features pdf.js adds that Node 20 lacks (`Promise.withResolvers`,
 * the new `Set` methods, base64 on `Uint8Array`, ...) stay.
 *
 * This module must be evaluated before pdfjs-dist: `pdfjs.ts` imports it first.
 */
const kept = [
  [Array.prototype, 'push', Array.prototype.push],
  [JSON, 'stringify', JSON.stringify],
  [JSON, 'parse', JSON.parse],
] as const;

export function restoreNatives(): void {
  for (const [owner, name, value] of kept)
    Object.defineProperty(owner, name, { value, writable: true, enumerable: false, configurable: true });
}
