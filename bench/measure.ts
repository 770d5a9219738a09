import { performance } from 'node:perf_hooks';

export const USER = 'admin';
export const PASSWORD = 'bench-password';
export const ROUNDS = 5;
export const PER_ROUND = 400;

export interface Timing {
  name: string;
  /** Median over rounds of the mean time per call (microseconds). */
  usPerCall: number;
}

export async function timeRounds(name: string, call: () => Promise<unknown>, warmup = 200): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await call();
  const perRound: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < PER_ROUND; i++) await call();
    perRound.push(((performance.now() - start) * 1000) / PER_ROUND);
  }
  perRound.sort((a, b) => a - b);
  return { name, usPerCall: perRound[Math.floor(perRound.length / 2)] as number };
}

export function report(baseline: Timing, ...others: Timing[]): void {
  const rows = [baseline, ...others].map((t) => ({
    case: t.name,
    'us/call': t.usPerCall.toFixed(1),
    'calls/s': Math.round(1e6 / t.usPerCall),
    'x baseline': (t.usPerCall / baseline.usPerCall).toFixed(2),
  }));
  console.table(rows);
}

