/**
 * The worker side of `BudgetedWorker`: loads the job module once, then for each job marks the
 * heartbeat, runs `handle(job)` and posts the result (or the error's message).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Heartbeat } from './budget.ts';

const { heartbeat, module } = workerData as { heartbeat: SharedArrayBuffer; module: string };
const hb = new Heartbeat(heartbeat);
const port = parentPort!;
const mod = (await import(module)) as { handle: (job: unknown) => unknown };

port.on('message', async ({ id, job }: { id: number; job: unknown }) => {
  hb.begin(id);
  try {
    const value = await mod.handle(job);
    port.postMessage({ id, ok: true, value });
  } catch (e) {
    port.postMessage({ id, ok: false, reason: e instanceof Error ? e.message : String(e) });
  } finally {
    hb.end();
  }
});
