/** SPEC step 1: the schema-complexity weights and the metadata fields they are read from. */
export const DIFFICULTY_WEIGHTS: Record<string, number> = { easy: 1, medium: 2, hard: 3 };
export const WEIGHT_FIELD_PRIORITY = ['schema_complexity', 'difficulty'] as const;
