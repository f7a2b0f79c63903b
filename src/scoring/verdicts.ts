/** Verdicts shared by the workers and the main thread (a module with no imports: cheap to load). */

/** The `scoring_error` of a record whose schema ran over the time budget on an earlier record. */
export const SCHEMA_TIMED_OUT = 'its schema ran over the time budget on an earlier record (not run again)';
