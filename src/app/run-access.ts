/** What the HTML report reads of run directories, through the runner's own readers. */
import { dirname } from 'node:path';
import type { RunAccess } from '../report/html.ts';

/**
 * What the report needs of run directories, from the runner: the model folder a run's scores are
 * named by, and the prompt it sent (its manifest's template, rendered as the runner renders it).
 */
export async function runAccess(): Promise<RunAccess> {
  const { readManifest, sanitizeModelId } = await import('../runner/run-dir.ts');
  const { makeTemplate, renderPrompt } = await import('../runner/prompt.ts');
  const manifestOf = (dir: string) => {
    try {
      return readManifest(dir);
    } catch {
      return undefined;
    }
  };
  return {
    modelDir: (runDir) => {
      const m = manifestOf(runDir);
      return typeof m?.model === 'string' ? sanitizeModelId(m.model) : undefined;
    },
    prompt: (file) => {
      const p = manifestOf(dirname(file))?.prompt;
      if (typeof p?.template !== 'string') return undefined;
      let template: ReturnType<typeof makeTemplate>;
      try {
        template = makeTemplate(p.template);
      } catch {
        return undefined;
      }
      return (f) => renderPrompt(template, f);
    },
  };
}
