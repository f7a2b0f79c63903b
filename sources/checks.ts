/**
 * The record checks `sob build` runs: they live in src/core/record-checks.ts, where the benchmark
 * loader that `run`, `eval` and `score` use shares them (one check for every way records come in).
 */
export * from '../src/core/record-checks.ts';
