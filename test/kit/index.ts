/**
 * The tests' kit, one import for what the tests (and bench/) share: running `sob` in this process
 * or as a child, the local protocol server the provider SDKs talk to, temporary folders, the
 * shared real data (and skipping without it), and fixtures (benchmarks, PDFs, the SOB image set).
 */
export * from './cli.ts';
export * from './documents.ts';
export * from './fixtures.ts';
export * from './ocr-cache.ts';
export * from './pdf-fixtures.ts';
export * from './protocol-server.ts';
export * from './shared-data.ts';
export * from './sob-image.ts';
export * from './temp.ts';
