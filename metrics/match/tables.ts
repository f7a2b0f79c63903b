/**
 * Synonym tables: groups of names for one thing (a country, a currency, a US state). Shipped
 * tables are data files in `tables/`; a policy may add its own tables or extend a shipped one.
 * Two values are synonyms in a table when some group holds both (after `tableKey`
 * normalisation: case, punctuation, accents, articles and spaces do not count).
 */

import currencies from '../../src/core/values/currencies.json' with { type: 'json' };
import countries from './tables/countries.json' with { type: 'json' };
import usStates from './tables/us_states.json' with { type: 'json' };
import { tableKey } from './text.ts';

export const SHIPPED_TABLES: Record<string, readonly (readonly string[])[]> = {
  countries: countries.groups,
  currencies: currencies.groups,
  us_states: usStates.groups,
};

export { CURRENCY_CODES } from '../../src/core/values/numbers.ts';

/** A table ready for look-ups: normalised name -> the groups (by index) that hold it. */
export class SynonymTable {
  private readonly index = new Map<string, number[]>();
  constructor(
    readonly name: string,
    groups: readonly (readonly string[])[],
  ) {
    groups.forEach((group, i) => {
      for (const name of group) {
        const k = tableKey(name);
        if (k === '') continue;
        const at = this.index.get(k);
        if (at === undefined) this.index.set(k, [i]);
        else if (!at.includes(i)) at.push(i);
      }
    });
  }

  /** The groups that hold this value (empty when none does). */
  groupsOf(value: string): readonly number[] {
    return this.index.get(tableKey(value)) ?? [];
  }

  /** Whether one group holds both values. */
  same(a: string, b: string): boolean {
    const ga = this.groupsOf(a);
    if (ga.length === 0) return false;
    const gb = this.groupsOf(b);
    for (const x of ga) if (gb.includes(x)) return true;
    return false;
  }
}

const shippedBuilt = new Map<string, SynonymTable>();

/** A shipped table by name (built once). */
function shippedTable(name: string): SynonymTable | undefined {
  const groups = SHIPPED_TABLES[name];
  if (groups === undefined) return undefined;
  let t = shippedBuilt.get(name);
  if (!t) shippedBuilt.set(name, (t = new SynonymTable(name, groups)));
  return t;
}

/** The tables a policy sees: shipped ones, user ones, and shipped ones a user extended. */
export function buildTables(user: Record<string, string[][]> = {}): Map<string, SynonymTable> {
  const out = new Map<string, SynonymTable>();
  for (const name of Object.keys(SHIPPED_TABLES)) out.set(name, shippedTable(name)!);
  for (const [name, groups] of Object.entries(user)) {
    const base = SHIPPED_TABLES[name] ?? [];
    out.set(name, new SynonymTable(name, [...base, ...groups]));
  }
  return out;
}
