/**
 * The names of the compliance track's validation protocols, apart from the validator so a command
 * can list them without loading ajv (src/core/validator.ts explains each), and which protocol a
 * schema record gets when none is asked (docs/compliance-protocols.md, "Which protocol, and why").
 */
export const PROTOCOLS = ['jsonschemabench', 'dialect'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/**
 * The protocol follows the data: a record built from JSONSchemaBench (`sob build
 * jsonschemabench` writes `metadata.dataset: "jsonschemabench"`) is read as the paper's harness
 * reads it, quirks included; any other schema record (`sob build schemas`, a user's rows with
 * `source: schema`, the probes) in its own draft. `--protocol` overrides both.
 */
export function defaultProtocol(dataset: unknown): Protocol {
  return dataset === 'jsonschemabench' ? 'jsonschemabench' : 'dialect';
}

/** Why a record was read under its protocol: 'asked' (--protocol) or the default for its data. */
export type ProtocolWhy = 'asked' | 'default';

/** The reason said beside a protocol (stderr, the summary's `protocol_reason`, the leaderboard, the report). */
export function protocolReason(protocol: Protocol, why: ProtocolWhy): string {
  if (why === 'asked') return '--protocol as asked';
  return protocol === 'jsonschemabench'
    ? "the default for records built from JSONSchemaBench: the paper's harness, quirks included; --protocol dialect reads each schema in its own draft"
    : "the default for schema records not built from JSONSchemaBench (your own schemas): each schema in its own $schema draft; --protocol jsonschemabench for the paper's harness";
}

/** The formats no value satisfies under the jsonschemabench protocol (the harness's checks return None). */
export const HARNESS_NEVER_FORMATS: ReadonlySet<string> = new Set(['ipv4', 'ipv6', 'uuid']);

/** Keywords whose values are data, not subschemas: a `format` inside them is not a format. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'examples', 'default', 'example']);

/**
 * Where a schema asks for a format that no value can satisfy under the protocol: under
 * `jsonschemabench`, every `format` of `ipv4`, `ipv6` or `uuid`, as `<schema pointer> (<format>)`
 * (e.g. `#/properties/id (uuid)`); nothing under `dialect`. At most 20 places, in document order.
 */
export function unsatisfiableFormats(schema: unknown, protocol: Protocol): string[] {
  if (protocol !== 'jsonschemabench') return [];
  const out: string[] = [];
  const esc = (k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1');
  const walk = (node: unknown, path: string, depth: number) => {
    if (out.length >= 20 || depth > 64 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const [i, v] of node.entries()) walk(v, `${path}/${i}`, depth + 1);
      return;
    }
    const o = node as Record<string, unknown>;
    if (typeof o.format === 'string' && HARNESS_NEVER_FORMATS.has(o.format))
      out.push(`${path === '' ? '#' : `#${path}`} (${o.format})`);
    for (const [k, v] of Object.entries(o))
      if (!DATA_KEYWORDS.has(k)) walk(v, `${path}/${esc(k)}`, depth + 1);
  };
  walk(schema, '', 0);
  return out;
}

/** The one warning a schema with such formats gets (at build, on stderr when scored, in the report). */
export function unsatisfiableWarning(places: string[], protocol: Protocol = 'jsonschemabench'): string {
  const fields = places.join(', ');
  return `format${places.length === 1 ? '' : 's'} no value can satisfy under the ${protocol} protocol (the harness's ipv4/ipv6/uuid checks return None): ${fields}; --protocol dialect checks ${places.length === 1 ? 'it' : 'them'} as written`;
}
