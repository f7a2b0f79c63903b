/**
 * The on-disk formats, one module each (docs/formats.md): what each file holds, its version,
 * the writer's text and the reader's check. Writers and readers on every floor import them from
 * here (`src/core/formats/`), so a file has one owner.
 */
export * from './batches.ts';
export * from './error-line.ts';
export * from './eval-row.ts';
export * from './eval-summary.ts';
export * from './field-row.ts';
export * from './jsonl-version.ts';
export * from './leaderboard.ts';
export * from './manifest.ts';
export * from './ocr-pages.ts';
export * from './response-line.ts';
export * from './version.ts';
