/**
 * The names of the compliance track's validation protocols, apart from the validator so a command
 * can list them without loading ajv (src/core/validator.ts explains each).
 */
export const PROTOCOLS = ['jsonschemabench', 'dialect'] as const;
export type Protocol = (typeof PROTOCOLS)[number];
