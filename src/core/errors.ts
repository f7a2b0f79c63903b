/** Errors a user can act on: the CLI prints `message` as one line (no stack unless --debug). */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** An input file that cannot be read at all (not a PDF, truncated, password-protected, a bad image): `reason` in words. */
export class UnreadableInput extends UserError {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'UnreadableInput';
  }
}

/** A place in an input file, for messages like `answers.jsonl:12: ...`. */
export function where(file: string, line?: number, recordId?: string): string {
  let s = file;
  if (line !== undefined) s += `:${line}`;
  if (recordId) s += ` (record ${recordId})`;
  return s;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
