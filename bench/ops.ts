import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EDGE_RECORD_OPERATIONS, REQUEST_OPERATIONS, runOperation, type Operation } from '../lib/ops';
import type { Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { PASSWORD, USER } from './measure';

/** Alternating rounds (twice this many) of this many calls per case. */
const ROUNDS = 5;
const PER_ROUND = 400;

/** Source of lib/ops (bench runs from dist/bench: the .ts files are two levels up). */
const OPS_SOURCE = join(__dirname, '..', '..', 'lib', 'ops');
/** The runner and the table itself, not entries. */
const FRAMEWORK = new Set(['types.ts', 'runner.ts', 'index.ts']);

/** Lines of code (not blank, not comments) of the section files, per operation. */
function linesPerOperation(): void {
  const operations = [...REQUEST_OPERATIONS.values(), ...EDGE_RECORD_OPERATIONS.values()];
  const rows: Array<Record<string, string | number>> = [];
  let total = 0;
  for (const file of readdirSync(OPS_SOURCE).filter((f) => f.endsWith('.ts') && !FRAMEWORK.has(f)).sort()) {
    const code = readFileSync(join(OPS_SOURCE, file), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('//') && !l.startsWith('/*') && !l.startsWith('*'));
    total += code.length;
    rows.push({ file, lines: code.length });
  }
  console.table(rows);
  console.log(`${operations.length} operations, ${total} lines of entries and parsers: ${(total / Math.max(1, operations.length)).toFixed(1)} lines per operation`);
}

/** Each round's mean time per call (us), both sides alternating round by round. */
async function alternate(calls: Array<() => Promise<unknown>>): Promise<number[][]> {
  const rounds: number[][] = calls.map(() => []);
  for (let r = 0; r < ROUNDS * 2; r++) {
    for (const [i, call] of calls.entries()) {
      const start = performance.now();
      for (let n = 0; n < PER_ROUND; n++) await call();
      (rounds[i] as number[]).push(((performance.now() - start) * 1000) / PER_ROUND);
    }
  }
  return rounds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export async function operationsOverhead(sim: Simulator): Promise<void> {
  console.log('\n## Operation table: size per operation, and the runner against a bare client.request of the same URL');
  linesPerOperation();
  const client = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'basic' });
  const op = REQUEST_OPERATIONS.get('readClimate') as Operation;
  const bare = async (): Promise<string> => (await client.request({ path: '/cgi-bin/admin/equip' })).body.toString('utf8');
  const viaRunner = (): Promise<unknown> => runOperation(client, op, {});
  try {
    for (let i = 0; i < 200; i++) await Promise.all([bare(), viaRunner()]);
    const [bareRounds, runnerRounds] = (await alternate([bare, viaRunner])) as [number[], number[]];
    const ratios = runnerRounds.map((t, i) => t / (bareRounds[i] as number));
    console.table([
      { case: 'bare client.request GET /cgi-bin/admin/equip', 'us/call (median)': median(bareRounds).toFixed(1) },
      { case: 'runOperation(readClimate): validate, build, send, error line check, parse', 'us/call (median)': median(runnerRounds).toFixed(1) },
    ]);
    console.log(`runner / bare: median ${median(ratios).toFixed(3)}x, spread ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}x over ${ratios.length} alternating rounds of ${PER_ROUND} calls`);
  } finally {
    await client.close();
  }
}
