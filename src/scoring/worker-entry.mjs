// Worker bootstrap: load TypeScript through tsx, whatever way the parent process was started.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
