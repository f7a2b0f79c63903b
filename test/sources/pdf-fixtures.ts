/** Moved to the tests' kit (test/kit/pdf-fixtures.ts); this path stays for the tests that import it. */
export * from '../kit/pdf-fixtures.ts';
