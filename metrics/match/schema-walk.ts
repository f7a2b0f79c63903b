/**
 * The JSON Schema node that describes a value at a path, for matcher hints (`type`, `format`,
 * `enum`, `description`) and `x-sob-match` annotations. Follows local `$ref`s and looks into
 * `allOf` / `anyOf` / `oneOf` branches; never throws, bounded on cyclic or deep schemas.
 */

export type SchemaNode = Record<string, unknown>;
/** One step of a path with array indices wildcarded. */
export type WStep = { key: string } | { index: true };

function isObj(v: unknown): v is SchemaNode {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
function own(o: SchemaNode, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

/** A local JSON pointer (`#/definitions/x`) in the root document. */
function pointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) cur = cur[Number(part)];
    else if (isObj(cur)) cur = own(cur, part);
    else return undefined;
  }
  return cur;
}

function deref(root: unknown, node: unknown): SchemaNode | undefined {
  let cur = node;
  for (let i = 0; i < 32 && isObj(cur); i++) {
    const ref = own(cur, '$ref');
    if (typeof ref !== 'string') return cur;
    cur = pointer(root, ref);
  }
  return isObj(cur) ? cur : undefined;
}

/** The node itself and its combinator branches (dereferenced, one level deep per call). */
export function variants(root: unknown, node: SchemaNode | undefined, depth = 0): SchemaNode[] {
  if (node === undefined || depth > 8) return [];
  const out: SchemaNode[] = [node];
  for (const k of ['allOf', 'anyOf', 'oneOf']) {
    const list = own(node, k);
    if (!Array.isArray(list)) continue;
    for (const b of list.slice(0, 32)) {
      const d = deref(root, b);
      if (d) out.push(...variants(root, d, depth + 1));
    }
  }
  return out;
}

function childOf(root: unknown, node: SchemaNode, step: WStep): SchemaNode | undefined {
  for (const v of variants(root, node)) {
    if ('key' in step) {
      const props = own(v, 'properties');
      if (isObj(props) && Object.hasOwn(props, step.key)) return deref(root, props[step.key]);
    } else {
      const items = own(v, 'items');
      if (isObj(items)) return deref(root, items);
      if (Array.isArray(items) && items.length > 0) return deref(root, items[0]);
      const prefix = own(v, 'prefixItems');
      if (Array.isArray(prefix) && prefix.length > 0) return deref(root, prefix[0]);
    }
  }
  if ('key' in step) {
    for (const v of variants(root, node)) {
      const extra = own(v, 'additionalProperties');
      if (isObj(extra)) return deref(root, extra);
    }
  }
  return undefined;
}

/** The schema node for a value one step below `node` (undefined when the schema does not say). */
export function schemaChild(
  root: unknown,
  node: SchemaNode | undefined,
  step: WStep,
): SchemaNode | undefined {
  if (node === undefined) return undefined;
  return childOf(root, node, step);
}

export function schemaRoot(root: unknown): SchemaNode | undefined {
  return deref(root, root);
}

/** What a leaf's schema says, gathered over its combinator branches (first one wins). */
export interface LeafHints {
  /** The non-null type, when the schema names exactly one. */
  type?: string;
  format?: string;
  enum?: string[];
  description?: string;
  annotation?: unknown;
}

export function hintsOf(root: unknown, node: SchemaNode | undefined): LeafHints {
  const h: LeafHints = {};
  for (const v of variants(root, node)) {
    const t = own(v, 'type');
    if (h.type === undefined) {
      if (typeof t === 'string' && t !== 'null') h.type = t;
      else if (Array.isArray(t)) {
        const nonNull = t.filter((x) => x !== 'null');
        if (nonNull.length === 1 && typeof nonNull[0] === 'string') h.type = nonNull[0];
      }
    }
    const f = own(v, 'format');
    if (h.format === undefined && typeof f === 'string') h.format = f;
    const e = own(v, 'enum');
    if (h.enum === undefined && Array.isArray(e)) {
      const strings = e.filter((x): x is string => typeof x === 'string');
      if (strings.length > 0) h.enum = strings;
    }
    const d = own(v, 'description') ?? own(v, 'title');
    if (h.description === undefined && typeof d === 'string') h.description = d;
    const a = own(v, 'x-sob-match');
    if (h.annotation === undefined && a !== undefined) h.annotation = a;
  }
  return h;
}
