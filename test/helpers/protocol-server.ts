/** Moved to the tests' kit (test/kit/protocol-server.ts); this path stays for the tests that import it. */
export * from '../kit/protocol-server.ts';
