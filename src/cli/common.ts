/** Shared CLI plumbing: option parsers that fail as usage errors, and stderr logging. */
import { InvalidArgumentError } from 'commander';
import { MODALITIES, type Modality } from '../core/record.ts';

export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

export function modalityOption(v: string): Modality {
  if (!(MODALITIES as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`expected one of ${MODALITIES.join(', ')}`);
  }
  return v as Modality;
}

export function choiceOption<T extends string>(choices: readonly T[]): (v: string) => T {
  return (v: string) => {
    if (!(choices as readonly string[]).includes(v))
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return v as T;
  };
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}
