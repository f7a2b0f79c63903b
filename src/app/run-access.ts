/** What the HTML report reads of run directories, through the runner's own readers. */
import { dirname } from 'node:path';
import type { ReportPage, RunAccess } from '../report/html.ts';

/**
 * What the report needs of run directories, from the runner: the model folder a run's scores are
 * named by, and the prompt it sent (its manifest's template, rendered as the runner renders it).
 */
export async function runAccess(): Promise<RunAccess> {
  const { readManifest, sanitizeModelId } = await import('../runner/run-dir.ts');
  const { documentNote, makeTemplate, renderPrompt } = await import('../runner/prompt.ts');
  const manifestOf = (dir: string) => {
    try {
      return readManifest(dir);
    } catch {
      return undefined;
    }
  };
  return {
    page: async (file, attachments, maxBytes) => {
      const bench = manifestOf(dirname(file))?.benchmark?.path;
      return pageOf(typeof bench === 'string' ? dirname(bench) : undefined, attachments, maxBytes);
    },
    modelDir: (runDir) => {
      const m = manifestOf(runDir);
      return typeof m?.model === 'string' ? sanitizeModelId(m.model) : undefined;
    },
    prompt: (file) => {
      const manifest = manifestOf(dirname(file));
      const p = manifest?.prompt;
      if (typeof p?.template !== 'string') return undefined;
      // `--input document|both`: the context as the runner wrote it (the note, the transcript or both).
      const mode = manifest?.settings?.input;
      let template: ReturnType<typeof makeTemplate>;
      try {
        template = makeTemplate(p.template);
      } catch {
        return undefined;
      }
      if (mode !== 'document' && mode !== 'both') return (f) => renderPrompt(template, f);
      return (f) => {
        const docs = f.documents;
        const context = !docs
          ? f.context
          : mode === 'document'
            ? documentNote(mode, docs)
            : `${f.context}\n\n${documentNote(mode, docs)}`;
        return renderPrompt(template, { ...f, context });
      };
    },
  };
}

const KB = (n: number) => `${Math.round(n / 1024)} KB`;
const dataUrl = (mime: string, b: Buffer) => `data:${mime};base64,${b.toString('base64')}`;

/**
 * A record's page for the report (docs/leaderboard.md "The report"): its first image attachment
 * (a page render), read from the benchmark folder and checked against its hash, downscaled
 * (pdf.js, as the document policy does) until it is at most `maxBytes`; a PDF without a render,
 * audio, a missing or altered file, or an unknown benchmark folder: a note saying so.
 */
export async function pageOf(
  benchDir: string | undefined,
  attachments: unknown,
  maxBytes: number,
): Promise<ReportPage | undefined> {
  const { Attachments, readAttachment } = await import('../core/attachments.ts');
  const parsed = Attachments.safeParse(attachments);
  if (!parsed.success || parsed.data.length === 0) return undefined;
  const list = parsed.data;
  const image = list.find((a) => a.kind === 'image');
  const first = image ?? list[0];
  const base = { path: first.path, kind: first.kind };
  if (!image) {
    const pdf = list.find((a) => a.kind === 'pdf');
    return {
      ...base,
      note: pdf
        ? `a PDF${pdf.pages ? ` (page${pdf.pages.length === 1 ? '' : 's'} ${pdf.pages.join(', ')})` : ''} with no page render attached: open ${pdf.path} in the benchmark folder`
        : `${first.kind}: nothing to show`,
    };
  }
  if (!benchDir)
    return {
      ...base,
      note: 'the benchmark folder is not known (the answers are not in a run directory with its manifest)',
    };
  let data: Buffer;
  try {
    data = readAttachment(benchDir, image);
  } catch (e) {
    return { ...base, note: `cannot be shown: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (data.length <= maxBytes) return { ...base, src: dataUrl(image.mime, data) };
  // The same page (records of one page, one page in many reports) is downscaled once a process.
  const key = `${image.sha256} ${image.mime} ${maxBytes}`;
  let shown = downscaled.get(key);
  if (!shown) {
    shown = downscale(data, image.mime, maxBytes);
    downscaled.set(key, shown);
  }
  return { ...base, ...(await shown) };
}

/** What `downscale` made of each page, by content hash, type and limit. */
const downscaled = new Map<string, Promise<Omit<ReportPage, 'path' | 'kind'>>>();

/** A page over `maxBytes` as a PNG under it (its longest edge cut by 1.5 until it fits), or a note. */
async function downscale(
  data: Buffer,
  mime: string,
  maxBytes: number,
): Promise<Omit<ReportPage, 'path' | 'kind'>> {
  const { documentTools } = await import('../../sources/documents.ts');
  const size = documentTools.imageSize(data, mime);
  if (!size || !/png|jpe?g/i.test(mime))
    return {
      note: `${KB(data.length)}, over the report's ${KB(maxBytes)} per page, and not a PNG or JPEG to downscale`,
    };
  let edge = Math.min(1600, Math.max(size.width, size.height));
  try {
    let png = await documentTools.downscaleImage(data, mime, edge);
    while (png.length > maxBytes && edge > 100) {
      edge = Math.floor(edge / 1.5);
      png = await documentTools.downscaleImage(data, mime, edge);
    }
    if (png.length > maxBytes) return { note: `stays over ${KB(maxBytes)} even at ${edge} px: not embedded` };
    return {
      src: dataUrl('image/png', png),
      note: `${size.width}x${size.height} px, ${KB(data.length)}: shown downscaled to a longest edge of ${edge} px (${KB(png.length)}; the report keeps each page under ${KB(maxBytes)})`,
    };
  } catch (e) {
    return { note: `cannot be downscaled: ${e instanceof Error ? e.message : String(e)}` };
  }
}
