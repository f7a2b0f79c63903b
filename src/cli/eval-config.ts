/**
 * `sob eval --config <file>`: the suite file's keys set the options the command line did not
 * give (read by src/cli/suite-file.ts, loaded only when a file is given: YAML is not read at
 * start-up).
 */
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';

/** Where a value came from, for `getOptionValueSource`: the suite file. */
export const CONFIG_SOURCE = 'config';

/**
 * `--config <file>` on `sob eval`: before the action, every key of the file sets its option
 * unless the command line gave that option (the command line wins).
 */
export function suiteOption(cmd: Command): Command {
  return cmd
    .option(
      '--config <file>',
      'a suite file (YAML or JSON): the benchmark, models with their own options, prompts, gates, epochs and any other flag as a key (docs/ci.md "A suite file"); flags given here win over it',
    )
    .hook('preAction', async (c) => {
      const file = c.opts().config as string | undefined;
      if (!file) return;
      const { readSuite } = await import('./suite-file.ts');
      for (const [attr, value] of Object.entries(readSuite(file, c))) {
        if (c.getOptionValueSource(attr) === 'cli') continue;
        c.setOptionValueWithSource(attr, value, CONFIG_SOURCE);
      }
      // As on the command line: a batch_* key without batch is a usage error, not ignored.
      if (!c.opts().batch) {
        const given = c.options
          .filter(
            (o) =>
              o.long?.startsWith('--batch-') && c.getOptionValueSource(o.attributeName()) === CONFIG_SOURCE,
          )
          .map((o) => o.attributeName().replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`));
        if (given.length > 0)
          throw new UserError(
            `${file}: ${given.join(', ')} only appl${given.length === 1 ? 'ies' : 'y'} with batch: true`,
            2,
          );
      }
    });
}
