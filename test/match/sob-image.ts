/** Moved to the tests' kit (test/kit/sob-image.ts); this path stays for the tests that import it. */
export * from '../kit/sob-image.ts';
