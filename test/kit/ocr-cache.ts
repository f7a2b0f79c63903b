/**
 * The OCR cache that the test files reading the shared data sets (the olmOCR sample, orbit-bench-en)
 * share within one `npm test`: scripts/test.mjs makes the folder, names it in SOB_TEST_OCR_CACHE
 * and removes it when the run ends, so a page one file OCR'd with the default settings is read
 * from the cache by the next (the olmOCR sample's pages: pdf.test.ts, then `sob ocr` and `sob build
 * pdf` in pdf-cli and ocr-gate). Every page is still OCR'd for real once per run; a test about
 * the cache itself, or about what OCR reads, keeps a cache of its own or none. A file run alone
 * gets a folder of its own, removed after it.
 */
import { join } from 'node:path';
import { tempDir } from './temp.ts';

export interface SharedOcrCache {
  /** For XDG_CACHE_HOME: `sob` keeps its OCR cache in `<home>/sob-eval/ocr`. */
  home: string;
  /** The OCR cache folder itself (`--cache-dir`, `cacheDir`). */
  ocr: string;
}

export function sharedOcrCache(): SharedOcrCache {
  const home = process.env.SOB_TEST_OCR_CACHE || tempDir('sob-test-ocr-');
  return { home, ocr: join(home, 'sob-eval', 'ocr') };
}
