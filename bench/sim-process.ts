/**
 * Simulated devices in processes of their own (the `ipcam-simulator` CLI), so that the device's
 * work is not counted in the CPU of the process measured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PASSWORD, USER } from './measure';

export interface SimulatorProcess {
  pid: number;
  /** Base URLs of the devices it simulates, in order. */
  urls: string[];
  ports: number[];
  stop(): Promise<void>;
}

const CLI = join(__dirname, '..', 'lib', 'simulator', 'cli.js');
const LISTENING = /listening on (https?:\/\/[^\s,]+)/;

/** Starts `count` devices in one simulator process (any free ports, the bench's account). */
export async function startSimulatorProcess(count: number): Promise<SimulatorProcess> {
  const child = spawn(process.execPath, [CLI, '--port', '0', '--count', String(count), '--user', USER], {
    env: { ...process.env, IPCAM_SIM_PASSWORD: PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-4096)));
  const exited = once(child, 'exit');
  const urls: string[] = [];
  const lines = createInterface({ input: child.stdout });
  try {
    await Promise.race([
      (async () => {
        for await (const line of lines) {
          const url = LISTENING.exec(line)?.[1];
          if (url) urls.push(url);
          if (urls.length === count) return;
        }
      })(),
      exited.then(() => {
        throw new Error(`the simulator process exited: ${errors}`);
      }),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  // Its output is not read any more: let it go nowhere rather than fill the pipe.
  child.stdout.resume();
  return {
    pid: child.pid as number,
    urls,
    ports: urls.map((url) => Number(new URL(url).port)),
    stop: () => stopChild(child, exited),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGINT');
  const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(forced);
}

/** Median and spread of a sample. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

/** `12.3 [11.9..13.0]` with `digits` decimals. */
export function formatSpread(s: Spread, digits = 1): string {
  return `${s.median.toFixed(digits)} [${s.min.toFixed(digits)}..${s.max.toFixed(digits)}]`;
}
