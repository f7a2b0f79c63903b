/**
 * What the PDF pipeline (sources/pdf/) asks of a model that reads pages, and what the runner's
 * vision-language reader (src/runner/vlm-pages.ts) implements: here, below both, so neither
 * imports the other.
 */

/** A page model's reading: the transcript, or why it failed (the page is then read locally). */
export type PageModelResult =
  | { markdown: string; info: Record<string, unknown>; failed?: undefined }
  | { failed: string; info: Record<string, unknown>; markdown?: undefined };

/**
 * A model that reads a page from its picture (a vision-language model behind a provider:
 * `src/runner/vlm-pages.ts`). `render(turn)` draws the page turned clockwise by `turn` degrees
 * with its longest side `longSide` pixels.
 */
export interface PageModel {
  readonly id: string;
  readonly longSide: number;
  read(
    where: { pdf: string; page: number },
    render: (turn: number) => Promise<Buffer>,
  ): Promise<PageModelResult>;
}
