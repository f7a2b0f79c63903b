/**
 * Comparators declared in a schema (docs/lenient.md "Comparators declared in the schema"):
 * ExtractBench's `evaluation_config` on a node, or our `x-sob-match`, collected by the data path
 * they apply to. `sob build extractbench` keeps them as a record's `metadata.field_policy` (and
 * removes them from the schema a model sees); the lenient matcher reads them from there or from
 * the schema itself. Pure: no I/O.
 */

/** The schema node a local `$ref` (`#/$defs/unit`) points to, or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref
    .slice(1)
    .split('/')
    .filter((p) => p !== '')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Each `evaluation_config` of a schema (or `x-sob-match`, our keyword for a user's own schemas),
 * by the data path it applies to: `.` between keys, `[*]` for any item (`authors[*].name`), ''
 * for the root; `$ref`s followed (a cycle stops), `anyOf`/`oneOf`/`allOf` branches at the path of
 * the node holding them. The first declaration of a path wins.
 */
export function declaredComparators(
  schema: unknown,
  keywords: readonly string[] = ['evaluation_config', 'x-sob-match'],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const walk = (node: unknown, path: string, refs: ReadonlySet<string>, depth: number): void => {
    if (depth > 64 || node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const o = node as Record<string, unknown>;
    for (const kw of keywords) if (o[kw] !== undefined && !(path in out)) out[path] = o[kw];
    if (typeof o.$ref === 'string' && !refs.has(o.$ref))
      walk(resolveRef(schema, o.$ref), path, new Set([...refs, o.$ref]), depth + 1);
    if (o.properties && typeof o.properties === 'object')
      for (const [k, s] of Object.entries(o.properties as Record<string, unknown>))
        walk(s, path === '' ? k : `${path}.${k}`, refs, depth + 1);
    const items = Array.isArray(o.items) ? o.items : o.items === undefined ? [] : [o.items];
    for (const s of [...items, ...(Array.isArray(o.prefixItems) ? o.prefixItems : [])])
      walk(s, `${path}[*]`, refs, depth + 1);
    for (const k of ['anyOf', 'oneOf', 'allOf'])
      if (Array.isArray(o[k])) for (const s of o[k] as unknown[]) walk(s, path, refs, depth + 1);
  };
  walk(schema, '', new Set(), 0);
  return out;
}
