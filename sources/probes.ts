/**
 * SchemaBench-style probes (Lu et al., 2025: "Learning to Generate Structured Output with Schema
 * Reinforcement Learning"), generated deterministically, each with a ground truth, so they score
 * on both tracks: the SOB value metrics (the answer's values against the ground truth) and schema
 * compliance (the answer validates: lengths, patterns, formats, enums).
 *
 * Two of SchemaBench's schema-only task families:
 * - escape translation (`probes:escape`): a string holding quotes, backslashes, line breaks, tabs,
 *   control characters, emoji or right-to-left text, which the answer must carry through as JSON
 *   escapes. Variants 1-3 give it in the context between marker lines; variant 4 gives it only
 *   in the schema (the one value its `enum` allows), as SchemaBench's schemas hold them. The
 *   schema pins the length (`minLength` = `maxLength`, in code points), so a lost or doubled
 *   character is a compliance failure too;
 * - custom formats (`probes:format`): a value the context gives in one form, asked in another
 *   the schema states: a `pattern` (`pattern`), a `format` (`format`), or a constraint stated in
 *   words in the description, enum-like values, an encoding, a unit (`words`; the schema also
 *   carries a pattern or type that checks it).
 *
 * Records: source `schema`, `metadata.track` `both`, `metadata.probe_family` and `probe_kind`,
 * category (`source_category`) `probes:escape` / `probes:format`.
 */
import type { Candidate, RecordLoader } from './types.ts';

export interface Probe {
  family: 'escape' | 'format';
  kind: string;
  /** 1-based within its kind. */
  n: number;
  context: string;
  question: string;
  schema: Record<string, unknown>;
  groundTruth: Record<string, unknown>;
}

/** Length in Unicode code points (what JSON Schema's minLength / maxLength count). */
function codePoints(s: string): number {
  return [...s].length;
}

// ---------------------------------------------------------------------------------------------
// Escape translation

/** Per kind, four strings: three given in the context, the fourth only in the schema. */
export const ESCAPE_STRINGS: Record<string, string[]> = {
  quotes: [
    'She said "hello" and left.',
    'The sign read: "No \'entry\' after 6"',
    '"Quoted" at both ends "',
    'He wrote ""double"" and \'\'single\'\' quotes',
  ],
  backslash: [
    'C:\\Users\\ada\\notes.txt',
    'regex \\d+\\.\\d+ matches 3.14',
    'a trailing backslash \\',
    '\\\\server\\share\\n-is-not-a-newline',
  ],
  newline: [
    'line one\nline two',
    'first\n\nthird, after a blank line',
    'windows\r\nline ending',
    'ends with a newline\n',
  ],
  tab: ['name\tage\tcity', '\tindented with a tab', 'tab\tthen\nnewline', 'col1\t\tcol3 after two tabs'],
  control: [
    'bell\u0007here',
    'form\ffeed and back\bspace',
    'start of heading \u0001 and unit separator \u001f',
    'escape \u001b[0m and delete \u007f and line\u2028separator',
  ],
  emoji: [
    'Launch day 🚀 went well 🎉',
    'family: 👩‍👩‍👧‍👦 is one grapheme of seven code points',
    'flags 🇫🇷🇯🇵 and a thumb 👍🏽',
    'math 𝔸𝔹ℂ and a clef 𝄞',
  ],
  rtl: [
    'שלום עולם',
    'مرحبا بالعالم 123',
    'Order #42 – הזמנה מס׳ 42 – done',
    '\u202bembedded RTL\u202c and a \u200fmark',
  ],
};

const BEGIN = '<<<BEGIN>>>';
const END = '<<<END>>>';

function escapeProbe(kind: string, n: number, text: string): Probe {
  const id = `escape-${kind}-${n}`;
  const len = codePoints(text);
  const inSchema = n === 4;
  const textSchema: Record<string, unknown> = {
    type: 'string',
    minLength: len,
    maxLength: len,
    description: inSchema
      ? 'The one value this schema allows, exactly, character for character.'
      : `The text between the ${BEGIN} and ${END} lines, exactly, character for character.`,
  };
  if (inSchema) textSchema.enum = [text];
  const context = inSchema
    ? `Probe ${id}. The text to give is the only value the schema allows for "text". It is ${len} characters long (Unicode code points); every quote, backslash, line break, tab, control character, emoji and direction mark in it is part of it.`
    : `Probe ${id}. Copy the text between the line ${BEGIN} and the line ${END} exactly, character for character. It is ${len} characters long (Unicode code points); every quote, backslash, line break, tab, control character, emoji and direction mark in it is part of it.\n${BEGIN}\n${text}\n${END}`;
  return {
    family: 'escape',
    kind,
    n,
    context,
    question: 'Give the probe id, the text exactly as it is, and its length as stated.',
    schema: {
      type: 'object',
      properties: {
        probe_id: { type: 'string', description: 'The probe id, as given.' },
        text: textSchema,
        length: {
          type: 'integer',
          minimum: 0,
          description: 'The length of the text as stated, in characters.',
        },
      },
      required: ['probe_id', 'text', 'length'],
      additionalProperties: false,
    },
    groundTruth: { probe_id: id, text, length: len },
  };
}

// ---------------------------------------------------------------------------------------------
// Custom formats

interface FormatCase {
  /** The sentence that gives the value. */
  context: string;
  /** The phrase in it that holds the value, copied as written. */
  source: string;
  /** The value's schema (its type, and the rule in a description, a pattern or a format). */
  value: Record<string, unknown>;
  answer: unknown;
}

const FORMAT_CASES: Record<string, FormatCase[]> = {
  pattern: [
    {
      context: 'The spare part is listed in the old catalogue as ab 1234 cd.',
      source: 'ab 1234 cd',
      value: {
        type: 'string',
        pattern: '^[A-Z]{2}-[0-9]{4}-[A-Z]{2}$',
        description:
          'The part code: its two letter groups in upper case around its four digits, joined by hyphens.',
      },
      answer: 'AB-1234-CD',
    },
    {
      context: 'Call the harbour office on +44 20 7946 0958 before noon.',
      source: '+44 20 7946 0958',
      value: {
        type: 'string',
        pattern: '^\\+[1-9][0-9]{6,14}$',
        description: 'The phone number in E.164 form: a plus sign, then the digits only, no spaces.',
      },
      answer: '+442079460958',
    },
    {
      context: 'The catalogue lists the guide as ISBN 978-0-306-40615-7.',
      source: '978-0-306-40615-7',
      value: {
        type: 'string',
        pattern: '^97[89][0-9]{10}$',
        description: 'The ISBN-13 as its thirteen digits, without hyphens.',
      },
      answer: '9780306406157',
    },
    {
      context: 'The firmware moved to major version 2, minor version 4, patch 11.',
      source: 'major version 2, minor version 4, patch 11',
      value: {
        type: 'string',
        pattern: '^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$',
        description: 'The version as a semantic version string: major.minor.patch.',
      },
      answer: '2.4.11',
    },
    {
      context: 'The banner is painted in the colour rgb(255, 99, 71).',
      source: 'rgb(255, 99, 71)',
      value: {
        type: 'string',
        pattern: '^#[0-9A-F]{6}$',
        description: 'The colour as a hash sign and six upper-case hexadecimal digits.',
      },
      answer: '#FF6347',
    },
    {
      context: 'The article is titled "Tide Mills of the North Sea".',
      source: 'Tide Mills of the North Sea',
      value: {
        type: 'string',
        pattern: '^[a-z0-9]+(-[a-z0-9]+)*$',
        description: 'The title as a URL slug: its words in lower case, joined by hyphens.',
      },
      answer: 'tide-mills-of-the-north-sea',
    },
  ],
  format: [
    {
      context: 'The survey took place on the third of March 2024.',
      source: 'the third of March 2024',
      value: { type: 'string', format: 'date', description: 'The date (RFC 3339 full-date).' },
      answer: '2024-03-03',
    },
    {
      context: 'The ferry leaves at a quarter past two in the afternoon, UTC.',
      source: 'a quarter past two in the afternoon, UTC',
      value: {
        type: 'string',
        format: 'time',
        description: 'The time of day (RFC 3339 full-time, with its offset).',
      },
      answer: '14:15:00Z',
    },
    {
      context: 'The vote closed at half past nine in the morning, UTC, on 1 July 2023.',
      source: 'half past nine in the morning, UTC, on 1 July 2023',
      value: { type: 'string', format: 'date-time', description: 'The moment (RFC 3339 date-time).' },
      answer: '2023-07-01T09:30:00Z',
    },
    {
      context: 'Write to ada at example dot org for a copy of the report.',
      source: 'ada at example dot org',
      value: { type: 'string', format: 'email', description: 'The email address.' },
      answer: 'ada@example.org',
    },
    {
      context: 'The guide is on example.com under the path /docs/start, served over https.',
      source: 'example.com under the path /docs/start, served over https',
      value: { type: 'string', format: 'uri', description: "The guide's address as an absolute URI." },
      answer: 'https://example.com/docs/start',
    },
    {
      context: 'The tide sensor answers at ten dot zero dot zero dot seventeen.',
      source: 'ten dot zero dot zero dot seventeen',
      value: { type: 'string', format: 'ipv4', description: "The sensor's IPv4 address." },
      answer: '10.0.0.17',
    },
    {
      context: 'The logger is registered as {123E4567-E89B-12D3-A456-426614174000}.',
      source: '{123E4567-E89B-12D3-A456-426614174000}',
      value: {
        type: 'string',
        format: 'uuid',
        pattern: '^[0-9a-f-]+$',
        description: 'The UUID in lower case, without braces.',
      },
      answer: '123e4567-e89b-12d3-a456-426614174000',
    },
    {
      context: 'The crossing takes two hours and thirty minutes.',
      source: 'two hours and thirty minutes',
      value: { type: 'string', format: 'duration', description: 'The duration (ISO 8601, e.g. P1DT4H).' },
      answer: 'PT2H30M',
    },
  ],
  words: [
    {
      context: 'This is URGENT: the pump must be fixed before anything else.',
      source: 'URGENT',
      value: {
        type: 'string',
        pattern: '^(low|medium|high)$',
        description: 'The priority: one of the words low, medium or high, in lower case.',
      },
      answer: 'high',
    },
    {
      context: 'The parcel was shipped from Japan.',
      source: 'Japan',
      value: {
        type: 'string',
        pattern: '^[A-Z]{2}$',
        description: 'The country as its ISO 3166-1 alpha-2 code: two upper-case letters.',
      },
      answer: 'JP',
    },
    {
      context: 'Encode the words lighthouse ferry.',
      source: 'lighthouse ferry',
      value: {
        type: 'string',
        contentEncoding: 'base64',
        pattern: '^[A-Za-z0-9+/]*={0,2}$',
        description: 'The base64 encoding (standard alphabet, with = padding) of the UTF-8 text.',
      },
      answer: Buffer.from('lighthouse ferry', 'utf8').toString('base64'),
    },
    {
      context: 'A return ticket costs $12.50 at the kiosk.',
      source: '$12.50',
      value: { type: 'integer', minimum: 0, description: 'The price in whole cents, as an integer.' },
      answer: 1250,
    },
    {
      context: 'The meeting is held in Rotterdam.',
      source: 'Rotterdam',
      value: { type: 'string', pattern: '^[A-Z ]+$', description: 'The city name in capital letters.' },
      answer: 'ROTTERDAM',
    },
    {
      context: 'The market opens on 2024-03-03.',
      source: '2024-03-03',
      value: {
        type: 'string',
        pattern: '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)$',
        description:
          'The day of the week of that date as a three-letter English abbreviation with a capital first letter: Mon, Tue, Wed, Thu, Fri, Sat or Sun.',
      },
      answer: 'Sun',
    },
  ],
};

function formatProbe(kind: string, n: number, c: FormatCase): Probe {
  const id = `format-${kind}-${n}`;
  return {
    family: 'format',
    kind,
    n,
    context: `Probe ${id}. ${c.context}`,
    question:
      'Give the probe id, the phrase of the context that gives the value (copied as written), and the value in the form the schema asks for.',
    schema: {
      type: 'object',
      properties: {
        probe_id: { type: 'string', description: 'The probe id, as given.' },
        source_text: {
          type: 'string',
          description: 'The phrase of the context that gives the value, as written.',
        },
        value: c.value,
      },
      required: ['probe_id', 'source_text', 'value'],
      additionalProperties: false,
    },
    groundTruth: { probe_id: id, source_text: c.source, value: c.answer },
  };
}

/** Every probe, in a fixed order: the same list on every run. */
function generateProbes(): Probe[] {
  const out: Probe[] = [];
  for (const [kind, texts] of Object.entries(ESCAPE_STRINGS))
    texts.forEach((t, i) => {
      out.push(escapeProbe(kind, i + 1, t));
    });
  for (const [kind, cases] of Object.entries(FORMAT_CASES))
    cases.forEach((c, i) => {
      out.push(formatProbe(kind, i + 1, c));
    });
  return out;
}

function probeCandidate(p: Probe): Candidate {
  return {
    origin: `probes: ${p.family}-${p.kind}-${p.n}`,
    record: {
      metadata: {
        record_id: `probe-${p.family}-${p.kind}-${p.n}`,
        source: 'schema',
        source_category: `probes:${p.family}`,
        dataset: 'probes',
        probe_family: p.family,
        probe_kind: p.kind,
        track: 'both',
      },
      input: { context: p.context, question: p.question, json_schema: p.schema },
      output: { ground_truth: p.groundTruth },
    },
  };
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'probe',
  loadRecords: async (_input, ctx) => {
    const probes = generateProbes();
    const per = new Map<string, number>();
    for (const p of probes) per.set(`${p.family}:${p.kind}`, (per.get(`${p.family}:${p.kind}`) ?? 0) + 1);
    ctx.log(`${probes.length} probes: ${[...per].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    return { candidates: probes.map(probeCandidate), problems: [] };
  },
};
