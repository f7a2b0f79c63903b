/**
 * The text layer's boxes: a pdf.js text item's width covers its own leading and trailing spaces
 * ("® " is one item on some pages), so a box covers only the item's ink and the gap to the next
 * item shows the space.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layoutPage, type TextBox } from '../../sources/pdf/layout.ts';
import { inkExtent } from '../../sources/pdf/pdfjs.ts';

test("an item's trailing and leading spaces are not part of its box", () => {
  const near = (r: { x0: number; x1: number }, x0: number, x1: number) =>
    assert.ok(Math.abs(r.x0 - x0) < 1e-9 && Math.abs(r.x1 - x1) < 1e-9, JSON.stringify(r));
  // "® " at 3.79 pt, 5.28 pt wide (as pdf.js reports it on a real annual report page).
  near(inkExtent('\u00ae ', 220.19, 5.28), 220.19, 222.83);
  near(inkExtent('  ab', 100, 8), 104, 108);
  near(inkExtent('abcd', 100, 8), 100, 108);
  near(inkExtent(' ', 100, 2), 102, 102);
});

test('the word after such an item keeps its space: "FTSE® Greater", not "FTSE®Greater"', () => {
  const box = (text: string, x: number, width: number, size: number, top: number): TextBox => ({
    text: text.trim(),
    ...inkExtent(text, x, width),
    top,
    bottom: top + size,
    size,
  });
  const boxes = [
    box('the performance of the FTSE', 70.87, 149.32, 6.5, 139.66),
    box('\u00ae ', 220.19, 5.28, 3.79, 139.66),
    box('Greater China HKD Index', 225.47, 75, 6.5, 139.66),
  ];
  assert.equal(
    layoutPage(boxes, { width: 420, height: 595 }),
    'the performance of the FTSE\u00ae Greater China HKD Index',
  );
});
