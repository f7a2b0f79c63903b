// Worker bootstrap for BudgetedWorker: load TypeScript through tsx, then the job runner.
import { register } from 'tsx/esm/api';

register();
await import('./budget-worker.ts');
