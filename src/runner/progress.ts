/**
 * The progress line on stderr: done/total, rate, ETA, errors, tokens, cost. On a terminal it
 * redraws one line (at most every 100 ms); otherwise it prints a plain line every interval.
 */
import type { Progress } from './run.ts';

function compact(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return String(n);
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One progress line (no newline), `now` in ms. */
export function formatProgress(p: Progress, now: number): string {
  const elapsed = Math.max(0.001, (now - p.startedAt) / 1000);
  const thisSession = p.done - p.resumed;
  const rate = thisSession / elapsed;
  const remaining = p.total - p.done - p.failed;
  const eta = rate > 0 ? duration(remaining / rate) : '?';
  const pct = p.total > 0 ? ((100 * p.done) / p.total).toFixed(1) : '100.0';
  let s = `${p.done}/${p.total} (${pct}%)  ${rate.toFixed(1)} rec/s  ETA ${eta}  errors ${p.errors}`;
  if (p.failed > 0) s += ` (${p.failed} failed)`;
  if (p.inputTokens > 0 || p.outputTokens > 0)
    s += `  tokens ${compact(p.inputTokens)} in / ${compact(p.outputTokens)} out`;
  if (p.note) s += `  ${p.note}`;
  if (p.cost > 0) s += `  $${p.cost.toFixed(p.cost < 1 ? 4 : 2)}`;
  return s;
}

export class ProgressReporter {
  private last = Number.NEGATIVE_INFINITY;
  private drawn = false;
  constructor(
    private readonly out: NodeJS.WriteStream | { write(s: string): boolean; isTTY?: boolean },
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
    /** Put before every line (e.g. the model, when a command runs several). */
    private readonly label = '',
  ) {}

  private line(p: Progress): string {
    return `${this.label}${formatProgress(p, this.now())}`;
  }

  private get tty(): boolean {
    return this.out.isTTY === true;
  }

  update(p: Progress): void {
    const t = this.now();
    if (t - this.last < (this.tty ? 100 : this.intervalMs)) return;
    this.last = t;
    this.draw(p);
  }

  private draw(p: Progress): void {
    if (this.tty) {
      this.out.write(`\r\x1b[2K${this.line(p)}`);
      this.drawn = true;
    } else this.out.write(`${this.line(p)}\n`);
  }

  /** The final state, ending the line. */
  finish(p: Progress): void {
    if (this.tty) {
      this.draw(p);
      this.out.write('\n');
      this.drawn = false;
    } else this.out.write(`${this.line(p)}\n`);
  }

  /** Before another message on the same stream: end a half-drawn line. */
  clear(): void {
    if (this.tty && this.drawn) {
      this.out.write('\r\x1b[2K');
      this.drawn = false;
    }
  }
}
