/** Each matcher on hand-worked cases: verdict, which matcher accepted, similarity. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fuzzyRatio } from '../../metrics/match/matchers.ts';
import { normalizeText } from '../../metrics/match/text.ts';
import { parseDate } from '../../src/core/values/dates.ts';
import { isClose, parseNumberText } from '../../src/core/values/numbers.ts';
import { leaf } from './helpers.ts';

const STR = { type: 'string' };
const NUM = { type: 'number' };

test('exact: Python equality (1 == 1.0, true == 1), nothing else; similarity is token F1', () => {
  assert.deepEqual(leaf('1', '1.0', { policy: { types: { number: 'exact' } } }), {
    verdict: 'match',
    by: 'exact',
    similarity: 1,
  });
  assert.equal(leaf('true', '1', { policy: { fields: { x: 'exact' } } }).verdict, 'match');
  const r = leaf(
    '"rely extensively on new knowledge created for specific situations"',
    '"Rely extensively on new knowledge created for specific situations"',
    { prop: STR, policy: { fields: { x: 'exact' } } },
  );
  assert.deepEqual(r, { verdict: 'no_match', by: null, similarity: 1 });
  // "red car" vs "red bus": one token of two in common: F1 = 0.5.
  assert.equal(leaf('"red car"', '"red bus"', { policy: { fields: { x: 'exact' } } }).similarity, 0.5);
});

test('text: case, NFKC, whitespace, punctuation and articles do not count', () => {
  const gold = '"rely extensively on new knowledge created for specific situations"';
  const pred = '"Rely extensively on new knowledge created for specific situations"';
  assert.deepEqual(leaf(gold, pred, { prop: STR }), { verdict: 'match', by: 'text', similarity: 1 });
  assert.equal(leaf('"The Lord of the Rings"', '"lord of rings"', { prop: STR }).by, 'text');
  assert.equal(leaf('"Hello,   world!"', '"hello world"', { prop: STR }).by, 'text');
  assert.equal(leaf('"ｆｕｌｌ width"', '"full width"', { prop: STR }).by, 'text'); // NFKC
  assert.equal(normalizeText('  Straße—Nord  '), 'strasse nord');
  // Accents count unless told otherwise.
  assert.equal(leaf('"Cañon City"', '"Canon City"', { prop: STR }).verdict, 'no_match');
  assert.equal(
    leaf('"Cañon City"', '"Canon City"', {
      policy: { fields: { x: { match: 'text', ignore_accents: true } } },
    }).by,
    'text',
  );
  // Case counts when told so.
  assert.equal(
    leaf('"ABC Corp"', '"abc corp"', { policy: { fields: { x: { match: 'text', ignore_case: false } } } })
      .verdict,
    'no_match',
  );
  // Written forms of "no value" equal null.
  assert.equal(leaf('null', '"N/A"', { prop: STR }).by, 'text');
  assert.equal(leaf('null', '""', { prop: STR }).by, 'text');
  assert.equal(leaf('null', '"unknown"', { prop: STR }).verdict, 'no_match');
});

test('number: currency, thousands separators both ways, (123), percent, tolerances', () => {
  assert.deepEqual(parseNumberText('$1,200.00'), { values: [1200], formatted: true });
  assert.deepEqual(parseNumberText('1.200,50 €'), { values: [1200.5], formatted: true });
  assert.deepEqual(parseNumberText('1 200,50'), { values: [1200.5], formatted: true });
  assert.deepEqual(parseNumberText("CHF 1'200.50"), { values: [1200.5], formatted: true });
  assert.deepEqual(parseNumberText('(123)'), { values: [-123], formatted: true });
  assert.deepEqual(parseNumberText('-$45.10'), { values: [-45.1], formatted: true });
  assert.deepEqual(parseNumberText('USD 3,000'), { values: [3000, 3], formatted: true });
  assert.deepEqual(parseNumberText('15%'), { values: [15, 0.15], formatted: true });
  assert.deepEqual(parseNumberText('1.5 million'), { values: [1_500_000], formatted: true });
  assert.deepEqual(parseNumberText('1,5'), { values: [1.5], formatted: true });
  assert.deepEqual(parseNumberText('0,500'), { values: [0.5], formatted: true });
  // One separator before exactly three digits: both readings.
  assert.deepEqual(parseNumberText('1,200'), { values: [1200, 1.2], formatted: true });
  assert.deepEqual(parseNumberText('1.200'), { values: [1.2, 1200], formatted: false });
  assert.deepEqual(parseNumberText('1,200,000'), { values: [1_200_000], formatted: true });
  assert.equal(parseNumberText('1,2,3'), null);
  assert.equal(parseNumberText('12 apples'), null);

  assert.deepEqual(leaf('1200', '"$1,200.00"', { prop: NUM }), {
    verdict: 'match',
    by: 'number',
    similarity: 1,
  });
  assert.equal(leaf('-123', '"(123)"', { prop: NUM }).by, 'number');
  assert.equal(leaf('0.15', '"15%"', { prop: NUM }).by, 'number');
  assert.equal(leaf('1200.5', '"1.200,50"', { prop: NUM }).by, 'number');
  assert.equal(leaf('1200', '1201', { prop: NUM }).verdict, 'no_match');
  const abs = { fields: { x: { match: 'number', abs_tol: 0.5 } } };
  assert.equal(leaf('100', '100.4', { policy: abs }).verdict, 'match');
  assert.equal(leaf('100', '100.6', { policy: abs }).verdict, 'no_match');
  const rel = { fields: { x: { match: 'number', rel_tol: 0.01 } } };
  assert.equal(leaf('100', '101', { policy: rel }).verdict, 'match'); // 1 <= 0.01 * 101
  assert.equal(leaf('100', '102', { policy: rel }).verdict, 'no_match'); // 2 > 1.02
  assert.equal(isClose(0.1 + 0.2, 0.3), true); // float noise only by default
});

test('number in a text field only when written as a quantity: a digit run is an id', () => {
  assert.equal(leaf('"$1,200.00"', '"1200"', { prop: STR }).by, 'number');
  assert.equal(leaf('"001234"', '"1234"', { prop: STR }).verdict, 'no_match');
  assert.equal(leaf('"1.10"', '"1.1"', { prop: STR }).verdict, 'no_match'); // a version, not a quantity
  // In a number field the same digit run is a number.
  assert.equal(leaf('1234', '"001234"', { prop: { type: 'integer' } }).by, 'number');
});

test('date: written forms to ISO, ambiguous numeric dates by rule, partial dates', () => {
  assert.deepEqual(parseDate('March 5, 2024'), ['2024-03-05']);
  assert.deepEqual(parseDate('Tue, 5th of March 2024'), ['2024-03-05']);
  assert.deepEqual(parseDate('05-Mar-24'), ['2024-03-05']);
  assert.deepEqual(parseDate('2024-03-05T10:30:00Z'), ['2024-03-05']);
  assert.deepEqual(parseDate('03/05/2024'), ['2024-03-05']); // mdy by default
  assert.deepEqual(parseDate('03/05/2024', { order: 'dmy' }), ['2024-05-03']);
  assert.deepEqual(parseDate('03/05/2024', { order: 'either' }), ['2024-03-05', '2024-05-03']);
  assert.deepEqual(parseDate('13/05/2024'), ['2024-05-13']); // a part above 12 settles it
  assert.deepEqual(parseDate('05.03.2024'), ['2024-03-05']); // dots: day first
  assert.deepEqual(parseDate('1/2/99'), ['1999-01-02']); // POSIX %y pivot
  assert.deepEqual(parseDate('March 2024'), ['2024-03']);
  assert.deepEqual(parseDate('Feb 30 2024'), []);
  assert.deepEqual(parseDate('20240305'), []);
  assert.deepEqual(parseDate('20240305', { digits: true }), ['2024-03-05']);

  assert.deepEqual(leaf('"2024-03-05"', '"March 5, 2024"', { prop: STR }), {
    verdict: 'match',
    by: 'date',
    similarity: 1,
  });
  assert.equal(leaf('"2024-03"', '"March 2024"', { prop: STR }).by, 'date');
  assert.equal(leaf('"2024-03-05"', '"March 2024"', { prop: STR }).verdict, 'no_match'); // precision differs
  const dmy = { fields: { x: { match: 'date', order: 'dmy' } } };
  assert.equal(leaf('"2024-05-03"', '"03/05/2024"', { policy: dmy }).by, 'date');
  assert.equal(leaf('"2024-05-03"', '"03/05/2024"', { prop: STR }).verdict, 'no_match');
});

test('an id-like digit run stays an id unless the schema says format: date', () => {
  const asId = leaf('"20240305"', '"2024-03-05"', { key: 'invoice_number', prop: STR });
  assert.equal(asId.verdict, 'no_match');
  assert.equal(asId.similarity, 0); // tokens "20240305" vs "2024 03 05"
  const asDate = leaf('"20240305"', '"2024-03-05"', {
    key: 'issued',
    prop: { type: 'string', format: 'date' },
  });
  assert.deepEqual(asDate, { verdict: 'match', by: 'date', similarity: 1 });
});

test('synonyms: countries and demonyms, currencies, US states, where the field name says so', () => {
  assert.deepEqual(leaf('"United States"', '"American"', { key: 'nationality', prop: STR }), {
    verdict: 'match',
    by: 'synonyms',
    similarity: 1,
  });
  assert.equal(leaf('"United States"', '"USA"', { key: 'country', prop: STR }).by, 'synonyms');
  assert.equal(leaf('"DEU"', '"Germany"', { key: 'countryCode', prop: STR }).by, 'synonyms');
  assert.equal(leaf('"USD"', '"$"', { key: 'currency', prop: STR }).by, 'synonyms');
  assert.equal(leaf('"EUR"', '"euros"', { key: 'currency', prop: STR }).by, 'synonyms');
  assert.equal(leaf('"California"', '"CA"', { key: 'state', prop: STR }).by, 'synonyms');
  assert.equal(leaf('"New York"', '"N.Y."', { key: 'state', prop: STR }).by, 'synonyms');
  // No hint in the name or description: no tables.
  assert.equal(leaf('"United States"', '"American"', { key: 'note', prop: STR }).verdict, 'no_match');
  // A hint in the description is enough.
  assert.equal(
    leaf('"France"', '"FR"', { key: 'origin', prop: { type: 'string', description: 'Country of origin' } })
      .by,
    'synonyms',
  );
  // Different things stay different.
  assert.equal(leaf('"Dominica"', '"Dominican Republic"', { key: 'country', prop: STR }).verdict, 'no_match');
  // Explicit tables, and a user table extending the policy.
  const user = {
    tables: { products: [['Widget', 'WDG-1']] },
    fields: { x: { match: 'synonyms', tables: ['products'] } },
  };
  assert.equal(leaf('"Widget"', '"wdg 1"', { policy: user }).by, 'synonyms');
  assert.equal(leaf('"Widget"', '"Gadget"', { policy: user }).verdict, 'no_match');
});

test('enum: both values name the same member, through the hinted tables too', () => {
  const prop = { type: 'string', enum: ['United States', 'Canada'] };
  assert.equal(leaf('"United States"', '"USA"', { key: 'country', prop }).by, 'enum');
  assert.equal(leaf('"Canada"', '"canada"', { key: 'country', prop }).by, 'enum');
  assert.equal(leaf('"Canada"', '"United States"', { key: 'country', prop }).verdict, 'no_match');
  const pol = { fields: { x: { match: 'enum', values: ['open', 'closed'] } } };
  assert.equal(leaf('"open"', '"OPEN"', { policy: pol }).by, 'enum');
});

test('fuzzy: normalised edit-distance ratio against a threshold', () => {
  // "recieve" -> "receive" is 2 edits over 15 characters: 1 - 2/15.
  assert.equal(fuzzyRatio('recieve payment', 'Receive payment'), 1 - 2 / 15);
  const at = (threshold: number) =>
    leaf('"receive payment"', '"recieve payment"', {
      policy: { fields: { x: { match: 'fuzzy', threshold } } },
    });
  assert.equal(at(0.85).by, 'fuzzy');
  assert.equal(at(0.9).verdict, 'no_match');
  assert.equal(fuzzyRatio('', ''), 1);
});

test('judge: what its first matcher does not accept is unsettled; without the judge, a no', () => {
  const pol = { fields: { x: { match: 'judge', first: 'text' } } };
  assert.equal(leaf('"NYC"', '"nyc"', { policy: pol }).by, 'text');
  assert.deepEqual(leaf('"NYC"', '"New York City"', { policy: pol }), {
    verdict: 'unsettled',
    by: null,
    similarity: 0,
  });
  assert.equal(
    leaf('"NYC"', '"New York City"', { policy: { ...pol, use_judge: false } }).verdict,
    'no_match',
  );
});
