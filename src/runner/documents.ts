/**
 * The one policy a record's documents are held to before a provider gets them (docs/providers.md
 * "Documents"), with the provider's `documentLimits`:
 *
 * - an image whose longest edge or size is over the limit is downscaled to the limit (PNG);
 * - a PDF over the page or byte limit is sent as its pages' images (each held to the image
 *   limits), or, with `pdfOverLimit: 'refuse'`, the record is refused with one line;
 * - a kind the provider does not take at all refuses the record with one line.
 *
 * Nothing is cut silently: each change is a `DocumentDecision`, written on the record's response
 * line and in the run manifest. The pixel work (decoding, rendering pages) is the caller's
 * `DocumentTools` (pdf.js through sources/), so this floor stays free of renderers.
 */
import { type Attachment, readAttachment, sha256Hex } from '../core/attachments.ts';
import type { DocumentLimits, ProviderAttachment } from '../providers/types.ts';

export type PdfOverLimit = 'images' | 'refuse';

/** What the renderer side does for the policy (sources/documents.ts implements it with pdf.js). */
export interface DocumentTools {
  /** Pixel size from the image's header; undefined when it cannot be read. */
  imageSize(data: Buffer, mime: string): { width: number; height: number } | undefined;
  /** The image drawn with its longest edge at most `maxEdge` px, as PNG. */
  downscaleImage(data: Buffer, mime: string, maxEdge: number): Promise<Buffer>;
  /** A PDF's page count. */
  pdfPages(data: Buffer): Promise<number>;
  /** Each page of a PDF drawn with its longest edge `maxEdge` px, as PNG, in order. */
  pdfPageImages(data: Buffer, maxEdge: number): Promise<Buffer[]>;
}

/** One change the policy made to one attachment (or the reason a record is refused). */
export interface DocumentDecision {
  /** The attachment as the record names it. */
  path: string;
  sha256: string;
  action: 'downscaled' | 'pdf_as_images' | 'refused';
  detail: string;
}

export type Fitted =
  | { ok: true; attachments: ProviderAttachment[]; decisions: DocumentDecision[]; bytes: number }
  | { ok: false; reason: string; decisions: DocumentDecision[] };

function baseName(path: string): string {
  return path.split('/').pop() ?? path;
}

function asSent(a: Attachment, data: Buffer, pages?: number): ProviderAttachment {
  return { kind: a.kind, mime: a.mime, data, sha256: a.sha256, name: baseName(a.path), pages };
}

const MB = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/**
 * A record's attachments, read from the benchmark folder now and held to `limits` (undefined: a
 * provider that does not look at documents, such as the baselines: sent as they are).
 */
export async function fitDocuments(
  benchmarkDir: string,
  list: readonly Attachment[],
  limits: DocumentLimits | undefined,
  tools: DocumentTools | undefined,
  pdfOverLimit: PdfOverLimit = 'images',
): Promise<Fitted> {
  const out: ProviderAttachment[] = [];
  const decisions: DocumentDecision[] = [];
  const refuse = (a: Attachment, detail: string): Fitted => {
    decisions.push({ path: a.path, sha256: a.sha256, action: 'refused', detail });
    return { ok: false, reason: `${a.path}: ${detail}`, decisions };
  };
  for (const a of list) {
    const data = readAttachment(benchmarkDir, a);
    if (!limits) {
      out.push(asSent(a, data, a.pages?.length));
      continue;
    }
    if (!limits.kinds.includes(a.kind))
      return refuse(
        a,
        `this provider takes no ${a.kind} documents (it takes ${limits.kinds.join(', ') || 'none'}; docs/providers.md "Documents")`,
      );
    if (a.kind === 'image') {
      const fitted = await fitImage(a, data, limits, tools);
      if ('refused' in fitted) return refuse(a, fitted.refused);
      out.push(fitted.sent);
      if (fitted.decision) decisions.push(fitted.decision);
      continue;
    }
    if (a.kind === 'pdf') {
      const pages = tools ? await tools.pdfPages(data) : (a.pages?.length ?? 1);
      const over =
        pages > limits.maxPdfPages
          ? `${pages} pages, over the limit of ${limits.maxPdfPages}`
          : data.length > limits.maxPdfBytes
            ? `${MB(data.length)}, over the limit of ${MB(limits.maxPdfBytes)}`
            : undefined;
      if (!over) {
        out.push(asSent(a, data, pages));
        continue;
      }
      if (pdfOverLimit === 'refuse' || !limits.kinds.includes('image') || !tools)
        return refuse(a, `the PDF is ${over} (--pdf-over-limit refuse)`);
      const edge = limits.maxImageEdge;
      const images = await tools.pdfPageImages(data, edge);
      images.forEach((png, i) => {
        out.push({
          kind: 'image',
          mime: 'image/png',
          data: png,
          sha256: sha256Hex(png),
          name: `${baseName(a.path).replace(/\.pdf$/i, '')}_pg${i + 1}.png`,
        });
      });
      decisions.push({
        path: a.path,
        sha256: a.sha256,
        action: 'pdf_as_images',
        detail: `the PDF is ${over}: sent as its ${images.length} page images (longest edge ${edge} px)`,
      });
      continue;
    }
    out.push(asSent(a, data));
  }
  const bytes = out.reduce((n, a) => n + a.data.length, 0);
  // Counted as base64, as inline data travels.
  const encoded = Math.ceil(bytes / 3) * 4;
  if (limits && encoded > limits.maxRequestBytes && !limits.uploadsOverLimit)
    return {
      ok: false,
      reason: `the documents are ${MB(encoded)} once encoded, over this provider's request limit of ${MB(limits.maxRequestBytes)}`,
      decisions,
    };
  return { ok: true, attachments: out, decisions, bytes };
}

async function fitImage(
  a: Attachment,
  data: Buffer,
  limits: DocumentLimits,
  tools: DocumentTools | undefined,
): Promise<{ sent: ProviderAttachment; decision?: DocumentDecision } | { refused: string }> {
  const size = tools?.imageSize(data, a.mime);
  const long = size ? Math.max(size.width, size.height) : 0;
  const overEdge = long > limits.maxImageEdge;
  const overBytes = data.length > limits.maxImageBytes;
  if (!overEdge && !overBytes) return { sent: asSent(a, data) };
  if (!tools || !size)
    return { refused: `the image is over this provider's limits and cannot be read to downscale it` };
  // The edge to the limit; an image too large in bytes alone is halved until it fits.
  let edge = Math.min(long, limits.maxImageEdge);
  let png = await tools.downscaleImage(data, a.mime, edge);
  while (png.length > limits.maxImageBytes && edge > 64) {
    edge = Math.floor(edge / 2);
    png = await tools.downscaleImage(data, a.mime, edge);
  }
  if (png.length > limits.maxImageBytes)
    return { refused: `the image stays over ${MB(limits.maxImageBytes)} even at ${edge} px` };
  const scale = edge / long;
  const w = Math.max(1, Math.round(size.width * scale));
  const h = Math.max(1, Math.round(size.height * scale));
  return {
    sent: {
      kind: 'image',
      mime: 'image/png',
      data: png,
      sha256: sha256Hex(png),
      name: baseName(a.path).replace(/\.[^.]+$/, '.png'),
    },
    decision: {
      path: a.path,
      sha256: a.sha256,
      action: 'downscaled',
      detail: `${size.width}x${size.height} px${overBytes ? ` (${MB(data.length)})` : ''} downscaled to ${w}x${h} px (limit: longest edge ${limits.maxImageEdge} px, ${MB(limits.maxImageBytes)})`,
    },
  };
}
