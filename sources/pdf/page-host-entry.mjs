// Worker bootstrap for PageHost run from the TypeScript sources: load TypeScript through tsx, then the worker.
import { register } from 'tsx/esm/api';

register();
await import('./page-host-worker.ts');
