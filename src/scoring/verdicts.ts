/** Verdicts shared by the workers and the main thread (a module with no imports: cheap to load). */

/** The `scoring_error` of a record whose schema ran over the time budget on an earlier record. */
export const SCHEMA_TIMED_OUT = 'its schema ran over the time budget on an earlier record (not run again)';

/** Two 32-bit FNV-1a hashes of a schema text (how timed-out schemas are told apart across threads). */
export function schemaTextHash(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return [a | 0, (b ^ text.length) | 0];
}
