/**
 * Device events through a real Node-RED, open loop, against the floor of a bare `node:http` server.
 *
 * Three processes besides this one: a LOAD process (event-load.ts) that posts camera plate events
 * on a fixed schedule whatever the answers do; a real Node-RED runtime (test/runtime-child.ts) with
 * the flow `ipcam-event-server` -> `ipcam-plate-event` -> `bench-event-sink` (event-sink-node.ts,
 * a bench-only node that notes arrival times); and the FLOOR (event-floor.ts), a bare `node:http`
 * server that reads each body and answers the same. The load process loads both, one after the
 * other, with the same schedule. Figures per run: latency from the post's DUE time (so a post that
 * waited for a connection or for the receiver counts its wait) to the plate message at the next
 * node (to the answer, for the floor), and the receiver process's CPU time per event (utime+stime
 * from /proc, every thread). The headline is our CPU per event over the floor's.
 *
 * Environment, for a quicker or a profiled run: IPCAM_BENCH_EVENTS_SECONDS (seconds per rate run,
 * default 20; the camera runs take half), IPCAM_BENCH_EVENTS_REPS (default 3), IPCAM_BENCH_EVENTS_RATES
 * (offered rates, default 1000,3000),
 * IPCAM_BENCH_EVENTS_PROFILE=<dir> (Node-RED and the floor run with --cpu-prof into <dir>; where their time
 * goes per event is printed side by side).
 */
import { fork, execFileSync, type ChildProcess, type Serializable } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventContentType, buildPlateEvent } from '../lib/simulator/events';
import { ChildRuntime, freePort, type FlowNode, type RuntimeProbe } from '../test/runtime-child';
import { monotonicMs, type ClockReading, type FloorReply, type LoadReply, type LoadRequest, type MemoryProbe, type RunSpec, type Schedule, type SinkStats } from './event-protocol';

const RATES = (process.env['IPCAM_BENCH_EVENTS_RATES'] ?? '1000,3000').split(',').map((rate) => positiveEnvValue('IPCAM_BENCH_EVENTS_RATES', rate));
const RATE_SECONDS = positiveEnv('IPCAM_BENCH_EVENTS_SECONDS', 20);
const REPS = positiveEnv('IPCAM_BENCH_EVENTS_REPS', 3);
/** Keep-alive connections of the load's pool: far more than are ever busy at once (the bench prints the most in flight). */
const POOL_CONNECTIONS = 32;
const CAMERAS = 500;
const PER_CAMERA = 2;
const CAMERA_SECONDS = Math.max(1, Math.round(RATE_SECONDS / 2));
const JITTER_MS = 50;
/** Room above 500 cameras for reconnects: the default cap (256) would turn half of them away. */
const MAX_CONNECTIONS = 600;
const HEAP_EVENTS = 100_000;
/** Open loop like the rest; if Node-RED cannot keep this rate the posts wait in the load process, not in Node-RED. */
const HEAP_RATE = 5_000;
const WARMUP_RATE = 1_000;
const WARMUP_SECONDS = 3;
const PLATE_DIGITS = 9;
const PROFILE_DIR = process.env['IPCAM_BENCH_EVENTS_PROFILE'];
const CLOCK_CHECKS = 20;
/** Receiver CPU per event over the parsing floor's: a guard, not a goal to chase (the decision on issue 21), judged by the median of the repetitions. */
const GUARD_LIKE_FOR_LIKE = 1.5;

function verdict(ratios: number[]): string {
  return median(ratios) <= GUARD_LIKE_FOR_LIKE ? 'held' : 'OVER';
}

function positiveEnv(name: string, fallback: number): number {
  return positiveEnvValue(name, process.env[name] ?? String(fallback));
}

function positiveEnvValue(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must hold positive numbers, got ${text}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Child processes

/** A forked child answering one request at a time over IPC. */
export class Child<Reply extends { type: string }> {
  private waiting: { type: string; resolve: (reply: Reply) => void; reject: (err: Error) => void } | undefined;
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly process: ChildProcess,
  ) {
    process.on('message', (message: Reply) => {
      const w = this.waiting;
      if (!w) return;
      if (message.type === 'error') {
        this.waiting = undefined;
        w.reject(new Error(`${name}: ${(message as unknown as { message: string }).message}`));
      } else if (message.type === w.type) {
        this.waiting = undefined;
        w.resolve(message);
      }
    });
    this.exited = new Promise((resolve) => process.once('exit', () => resolve()));
    void this.exited.then(() => this.waiting?.reject(new Error(`${name} exited`)));
  }

  get pid(): number {
    return this.process.pid as number;
  }

  /** The next reply of `type`, after sending `message` (if any); rejects after `timeoutMs`. */
  ask<T extends Reply['type']>(message: unknown, type: T, timeoutMs = 60_000): Promise<Extract<Reply, { type: T }>> {
    if (this.waiting) throw new Error(`${this.name}: a request is pending`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`${this.name}: no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = {
        type,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply as Extract<Reply, { type: T }>);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      if (message !== undefined) this.process.send(message as Serializable);
    });
  }

  async stop(farewell: unknown): Promise<void> {
    if (this.process.exitCode === null && this.process.connected) this.process.send(farewell as Serializable);
    const forced = setTimeout(() => this.process.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(forced);
  }
}

export function forkBench(file: string, execArgv: string[] = [], args: string[] = []): ChildProcess {
  return fork(join(__dirname, file), args, { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
}

/** CPU time of process `pid` so far, every thread, in microseconds (utime + stime of /proc/<pid>/stat). */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 (state) on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

const CLOCK_TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// ---------------------------------------------------------------------------------------------
// Figures

interface RunFigures {
  events: number;
  /** Receiver CPU per event delivered (ours: plate messages at the sink; floor: posts answered), us. */
  cpuPerEvent: number;
  /** Due time to the next node (ours) or to the answer (floor), ms. */
  latency: Percentiles;
  /** Due time to the answer at the load process, ms (both). */
  answer: Percentiles;
  /** How late the load process sent posts against their due time (p99, ms): its own share of the latency. */
  sendLagP99: number;
  maxInFlight: number;
  maxQueued: number;
  lost: number;
  loadCpuPerPost: number;
}

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
}

export function percentiles(values: Float64Array): Percentiles {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort();
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
  return { p50: at(50), p99: at(99), max: sorted[sorted.length - 1] ?? NaN };
}

function differences(to: Float64Array, from: Float64Array): Float64Array {
  return to.map((t, i) => t - (from[i] as number));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `median (min..max)` of a figure over repetitions. */
export function spread(values: number[], digits: number): string {
  if (values.length === 1) return (values[0] as number).toFixed(digits);
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}..${Math.max(...values).toFixed(digits)})`;
}

const mb = (bytes: number): string => (bytes / 1048576).toFixed(1);

// ---------------------------------------------------------------------------------------------
// The bench

interface Rig {
  load: Child<LoadReply>;
  floor: Child<FloorReply>;
  floorPort: number;
  /** The like-for-like floor: the bare one plus plain fast-xml-parser and the plate, list and time picked. */
  parse: Child<FloorReply>;
  parsePort: number;
  runtime: ChildRuntime;
  eventPort: number;
  nodesDir: string;
  template: { head: string; tail: string };
}

type Target = 'ours' | 'floor' | 'parse';
const TARGETS: readonly Target[] = ['ours', 'floor', 'parse'];
const FLOOR_NAMES: Record<Exclude<Target, 'ours'>, string> = { floor: 'bare floor (to answer)', parse: 'parsing floor (to answer)' };

function floorChild(rig: Rig, target: Exclude<Target, 'ours'>): Child<FloorReply> {
  return target === 'floor' ? rig.floor : rig.parse;
}

/** A camera plate post of ~1 KB without pictures (a newer camera's fields), split around its plate. */
function plateTemplate(): { head: string; tail: string } {
  const mark = 'P'.padEnd(PLATE_DIGITS + 1, '#');
  const doc = buildPlateEvent('ipc', { plate: mark, images: false, listType: 'whiteList', direction: 'approach', confidence: 98.5, vehicle: { color: 'white', type: 'sedan', brand: 'Toyota', model: 'Corolla' } });
  const [head, tail] = doc.split(mark) as [string, string];
  return { head, tail };
}

function benchFlow(eventPort: number): FlowNode[] {
  const z = 'bench-events';
  return [
    { id: z, type: 'tab', label: 'events bench' },
    { id: 'bench-server', type: 'ipcam-event-server', z, port: String(eventPort), bind: '127.0.0.1', path: '/', maxBody: '', maxConnections: String(MAX_CONNECTIONS), allow: '' },
    { id: 'bench-plates', type: 'ipcam-plate-event', z, server: 'bench-server', device: '', match: '', lists: [], dedup: '0', images: 'none', wires: [['bench-sink'], []] },
    { id: 'bench-sink', type: 'bench-event-sink', z, server: 'bench-server', wires: [] },
  ];
}

/** A nodes directory holding the bench-only sink node (its code stays in dist/bench). */
function sinkNodesDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ipcam-bench-nodes-'));
  writeFileSync(join(dir, 'bench-event-sink.js'), `module.exports = require(${JSON.stringify(join(__dirname, 'event-sink-node.js'))});\n`);
  writeFileSync(join(dir, 'bench-event-sink.html'), '<script type="text/html" data-template-name="bench-event-sink"></script>\n');
  return dir;
}

export async function admin<T>(runtime: ChildRuntime, path: string): Promise<T> {
  const res = await fetch(`${runtime.adminUrl}${path}`);
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

export async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port}`);
}

async function startRig(): Promise<Rig> {
  const nodesDir = sinkNodesDir();
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const runtime = new ChildRuntime({ nodesDir, nodeArgs: profileArgs('node-red') });
  await runtime.start();
  const eventPort = await freePort();
  await runtime.deploy(benchFlow(eventPort));
  await waitForPort(eventPort);
  const floor = new Child<FloorReply>('floor server', forkBench('event-floor.js', ['--expose-gc', ...profileArgs('floor')]));
  const { port: floorPort } = await floor.ask(undefined, 'listening');
  const parse = new Child<FloorReply>('parsing floor server', forkBench('event-floor.js', ['--expose-gc', ...profileArgs('parse')], ['parse']));
  const { port: parsePort } = await parse.ask(undefined, 'listening');
  const load = new Child<LoadReply>('load process', forkBench('event-load.js'));
  return { load, floor, floorPort, parse, parsePort, runtime, eventPort, nodesDir, template: plateTemplate() };
}

async function stopRig(rig: Rig): Promise<void> {
  await rig.load.stop({ type: 'exit' } satisfies LoadRequest);
  await rig.floor.stop('exit');
  await rig.parse.stop('exit');
  await rig.runtime.stop();
  rmSync(rig.nodesDir, { recursive: true, force: true });
}

/** One run; `connected` is called once the load's connections are open, before the schedule starts. */
async function run(rig: Rig, target: Target, schedule: Schedule, keepOpen = false, connected?: () => Promise<void>): Promise<RunFigures> {
  const spec: RunSpec = {
    host: '127.0.0.1',
    port: target === 'ours' ? rig.eventPort : target === 'floor' ? rig.floorPort : rig.parsePort,
    path: '/',
    contentType: eventContentType('ipc'),
    ...rig.template,
    plateDigits: PLATE_DIGITS,
    schedule,
    keepOpen,
    seed: 20_240_613,
  };
  const seconds = schedule.seconds;
  const pid = target === 'ours' ? (rig.runtime.pid as number) : floorChild(rig, target).pid;
  await rig.load.ask({ type: 'prepare', spec } satisfies LoadRequest, 'ready');
  const posts = schedule.mode === 'pool' ? Math.round(schedule.rate * seconds) : schedule.cameras * Math.round(schedule.perCamera * seconds);
  if (target === 'ours') await admin(rig.runtime, `/bench-sink/reset?posts=${posts}`);
  await connected?.();
  const cpuBefore = cpuUs(pid);
  const from = monotonicMs();
  const { result } = await rig.load.ask({ type: 'go' } satisfies LoadRequest, 'result', seconds * 1000 * 5 + 60_000);
  let delivered = posts - result.failed - result.refused;
  let latency: Float64Array;
  if (target === 'ours') {
    // The answer goes before the message is handed on: wait until every answered post reached the sink.
    let stats = await admin<SinkStats>(rig.runtime, '/bench-sink/stats');
    for (let i = 0; stats.arrived < delivered && i < 600; i++) {
      await sleep(50);
      stats = await admin<SinkStats>(rig.runtime, '/bench-sink/stats');
    }
    delivered = stats.arrived;
    if (stats.strays > 0) throw new Error(`the sink got ${stats.strays} messages it did not expect`);
    latency = differences(new Float64Array(await (await fetch(`${rig.runtime.adminUrl}/bench-sink/arrivals`)).arrayBuffer()), result.intended);
  } else {
    latency = differences(result.answered, result.intended);
  }
  const cpu = cpuUs(pid) - cpuBefore;
  profileWindows?.[target].push({ from, to: monotonicMs(), events: delivered });
  return {
    events: delivered,
    cpuPerEvent: cpu / delivered,
    latency: percentiles(latency),
    answer: percentiles(differences(result.answered, result.intended)),
    sendLagP99: percentiles(differences(result.sent, result.intended)).p99,
    maxInFlight: result.maxInFlight,
    maxQueued: result.maxQueued,
    lost: posts - delivered,
    loadCpuPerPost: result.cpuUs / posts,
  };
}

function check(figures: RunFigures, what: string): RunFigures {
  if (figures.lost > 0) console.warn(`  ! ${what}: ${figures.lost} posts not delivered`);
  return figures;
}

/** Monotonic readings of another process must fall between this process's readings around the exchange. */
async function clockCheck(rig: Rig): Promise<void> {
  const here = (): ClockReading => ({ monotonic: monotonicMs(), wall: performance.timeOrigin + performance.now() });
  const rows: Array<Record<string, string>> = [];
  const ask: Array<[string, () => Promise<ClockReading>]> = [
    ['load process (IPC)', async () => (await rig.load.ask({ type: 'clock' } satisfies LoadRequest, 'clock')).clock],
    ['floor server (IPC)', async () => (await rig.floor.ask('clock', 'clock')).clock],
    ['Node-RED (admin HTTP)', async () => await admin<SinkStats>(rig.runtime, '/bench-sink/stats')],
  ];
  for (const [name, read] of ask) {
    let ordered = 0;
    let widest = 0;
    const wallSkews: number[] = [];
    for (let i = 0; i < CLOCK_CHECKS; i++) {
      const before = here();
      const there = await read();
      const after = here();
      if (before.monotonic <= there.monotonic && there.monotonic <= after.monotonic) ordered += 1;
      widest = Math.max(widest, after.monotonic - before.monotonic);
      // How far the two processes' `timeOrigin + now()` disagree, with the monotonic clock as the reference.
      if (!Number.isNaN(there.wall)) wallSkews.push(there.wall - there.monotonic - ((before.wall + after.wall) / 2 - (before.monotonic + after.monotonic) / 2));
    }
    rows.push({
      process: name,
      'hrtime inside the exchange': `${ordered}/${CLOCK_CHECKS}`,
      'widest exchange (ms)': widest.toFixed(2),
      'timeOrigin+now() offset vs this process (ms)': wallSkews.length > 0 ? `${Math.min(...wallSkews).toFixed(3)}..${Math.max(...wallSkews).toFixed(3)}` : '-',
    });
    if (ordered !== CLOCK_CHECKS) throw new Error(`process.hrtime of the ${name} is not the clock of this process: the latencies would be meaningless`);
  }
  console.log('Clock: process.hrtime (CLOCK_MONOTONIC, one clock for the whole machine) read in each process:');
  console.table(rows);
}

/**
 * Untimed, before anything is timed: ours and the parsing floor get the same plates from the same
 * posts. Ours: the sink got every plate once (post numbers from the plates) and nothing else;
 * the floor: the plates, list and time each post holds.
 */
async function samePlates(rig: Rig): Promise<void> {
  const posts = 20;
  const schedule: Schedule = { mode: 'pool', rate: 100, seconds: posts / 100, connections: 1 };
  const ours = await run(rig, 'ours', schedule);
  const stats = await admin<SinkStats>(rig.runtime, '/bench-sink/stats');
  await run(rig, 'parse', schedule);
  const picks = (await rig.parse.ask('picks', 'picks')).picks.slice(-posts);
  const time = /<currentTime[^>]*>(\d+)</.exec(rig.template.head)?.[1] ?? '';
  const expected = Array.from({ length: posts }, (_, i) => `P${String(i).padStart(PLATE_DIGITS, '0')} whiteList ${time}`);
  const floorPlates = picks.map((p) => `${p.plate} ${p.list} ${p.time}`);
  if (ours.events !== posts || ours.lost !== 0 || stats.strays !== 0) throw new Error(`plate check: ours delivered ${ours.events} of ${posts} plates, ${stats.strays} strays`);
  if (JSON.stringify(floorPlates) !== JSON.stringify(expected)) throw new Error(`plate check: the parsing floor picked ${floorPlates.slice(0, 3).join(', ')}..., expected ${expected.slice(0, 3).join(', ')}...`);
  console.log(`check (untimed): ${posts} posts; ours handed on each of their ${posts} plates once (P000000000..), the parsing floor picked the same plates, list whiteList and time ${time}`);
}

interface Fleet {
  ours: RunFigures[];
  floor: RunFigures[];
  parse: RunFigures[];
  /** Per receiver: with no connection, with the cameras connected before any post, and after the run (still connected). */
  memory: Record<Target, { none: MemoryProbe[]; idle: MemoryProbe[]; used: MemoryProbe[] }>;
  server: Array<SinkStats['server']>;
}

/** A receiver's memory after GC (`gc` false: only its connections, without the GC's cost). */
async function memoryOf(rig: Rig, target: Target, gc = true): Promise<MemoryProbe> {
  if (target !== 'ours') return (await floorChild(rig, target).ask(gc ? 'probe' : 'connections', 'probe')).probe;
  const connections = (await admin<SinkStats>(rig.runtime, '/bench-sink/stats')).server?.connections ?? 0;
  if (!gc) return { rss: NaN, heapUsed: NaN, heapTotal: NaN, external: NaN, connections };
  const probe = await rig.runtime.probe();
  return { rss: probe.rss, heapUsed: probe.heapUsed, heapTotal: probe.heapTotal ?? NaN, external: probe.external ?? NaN, connections };
}

export async function eventsThroughput(): Promise<void> {
  const began = performance.now();
  const cores = cpus().length;
  console.log(`\n## Device events, open loop: load process -> Node-RED (ipcam-event-server -> ipcam-plate-event -> next node), beside a bare node:http floor`);
  console.log(`machine: ${cores} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  const rig = await startRig();
  try {
    await clockCheck(rig);
    await samePlates(rig);
    const pool = (rate: number, seconds: number): Schedule => ({ mode: 'pool', rate, seconds, connections: POOL_CONNECTIONS });
    // Warm-up: connections, JIT, Node-RED's lazily built parts.
    await run(rig, 'ours', pool(WARMUP_RATE, WARMUP_SECONDS));
    await run(rig, 'floor', pool(WARMUP_RATE, WARMUP_SECONDS));
    await run(rig, 'parse', pool(WARMUP_RATE, WARMUP_SECONDS));

    // Heap after GC over 100,000 events.
    const before = await rig.runtime.probe();
    const heapRun = check(await run(rig, 'ours', pool(HEAP_RATE, HEAP_EVENTS / HEAP_RATE)), 'heap run');
    const after = await rig.runtime.probe();
    const serverAfter = (await admin<SinkStats>(rig.runtime, '/bench-sink/stats')).server;

    // Offered rates, ours and the floor in turn, repeated. A profile counts these runs and the cameras' only.
    if (PROFILE_DIR) profileWindows = { ours: [], floor: [], parse: [] };
    const byRate = new Map<number, Record<Target, RunFigures[]>>(RATES.map((rate) => [rate, { ours: [], floor: [], parse: [] }]));
    for (let rep = 0; rep < REPS; rep++) {
      for (const rate of RATES) {
        const figures = byRate.get(rate) as Record<Target, RunFigures[]>;
        for (const target of TARGETS) figures[target].push(check(await run(rig, target, pool(rate, RATE_SECONDS)), `${target} at ${rate}/s`));
      }
      console.log(`repetition ${rep + 1} of ${REPS} of the rates done, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    }

    // 500 cameras, each its own keep-alive socket from its own address.
    const cameras: Schedule = { mode: 'cameras', cameras: CAMERAS, perCamera: PER_CAMERA, seconds: CAMERA_SECONDS, jitterMs: JITTER_MS };
    const fleet: Fleet = { ours: [], floor: [], parse: [], memory: { ours: { none: [], idle: [], used: [] }, floor: { none: [], idle: [], used: [] }, parse: { none: [], idle: [], used: [] } }, server: [] };
    for (let rep = 0; rep < REPS; rep++) {
      for (const target of TARGETS) {
        const memory = fleet.memory[target];
        memory.none.push(await memoryOf(rig, target));
        const connected = async (): Promise<void> => {
          // Connected at the load process is not yet accepted by the receiver.
          for (let i = 0; i < 200 && (await memoryOf(rig, target, false)).connections < CAMERAS; i++) await sleep(50);
          memory.idle.push(await memoryOf(rig, target));
          if (target === 'ours') fleet.server.push((await admin<SinkStats>(rig.runtime, '/bench-sink/stats')).server);
        };
        fleet[target].push(check(await run(rig, target, cameras, true, connected), `${target}, 500 cameras`));
        memory.used.push(await memoryOf(rig, target));
        await rig.load.ask({ type: 'close-connections' } satisfies LoadRequest, 'closed');
      }
    }

    report(byRate, fleet, { before, after, heapRun, serverAfter });
  } finally {
    await stopRig(rig);
  }
  if (PROFILE_DIR && profileWindows) summarizeProfiles(PROFILE_DIR, profileWindows);
  console.log(`machine load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end; events bench took ${((performance.now() - began) / 1000).toFixed(0)} s`);
}

function latencyCells(prefix: string, values: Percentiles[]): Record<string, string> {
  return {
    [`${prefix}p50 ms`]: spread(values.map((v) => v.p50), 2),
    [`${prefix}p99 ms`]: spread(values.map((v) => v.p99), 2),
    [`${prefix}max ms`]: spread(values.map((v) => v.max), 1),
  };
}

function rows(name: string, ours: RunFigures[], floor: RunFigures[], parse: RunFigures[]): Array<Record<string, string>> {
  const row = (who: string, f: RunFigures[]): Record<string, string> => ({
    case: `${name}, ${who}`,
    events: spread(
      f.map((x) => x.events),
      0,
    ),
    'CPU us/event': spread(
      f.map((x) => x.cpuPerEvent),
      1,
    ),
    ...latencyCells(
      '',
      f.map((x) => x.latency),
    ),
    'in flight, most': String(Math.max(...f.map((x) => x.maxInFlight))),
    'waiting, most': String(Math.max(...f.map((x) => x.maxQueued))),
  });
  return [row('ours (to next node)', ours), row(FLOOR_NAMES.floor, floor), row(FLOOR_NAMES.parse, parse)];
}

function report(
  byRate: Map<number, Record<Target, RunFigures[]>>,
  fleet: Fleet,
  heap: { before: RuntimeProbe; after: RuntimeProbe; heapRun: RunFigures; serverAfter: SinkStats['server'] },
): void {
  const cases: Array<[string, RunFigures[], RunFigures[], RunFigures[]]> = [
    ...[...byRate].map(([rate, f]): [string, RunFigures[], RunFigures[], RunFigures[]] => [`${rate.toLocaleString('en')}/s, ${RATE_SECONDS} s`, f.ours, f.floor, f.parse]),
    [`${CAMERAS} cameras x ${PER_CAMERA}/s, ${CAMERA_SECONDS} s`, fleet.ours, fleet.floor, fleet.parse],
  ];
  console.log(
    `\nLatency from each post's due time (ours: to the plate message at the next node; the floor: to its answer at the load process); ` +
      `median (min..max) over ${REPS} repetitions, ours and the floor in turn with the same schedule. ` +
      `"waiting": posts due while no connection was free (pool) or while their camera's previous post was unanswered: above 0, the receiver fell behind`,
  );
  console.table(cases.flatMap(([name, ours, floor, parse]) => rows(name, ours, floor, parse)));

  console.log(
    `\nHeadline: receiver CPU per event, ours over each floor (per repetition: the runs next to each other); guard <= ${GUARD_LIKE_FOR_LIKE} (median) over the parsing floor ` +
      `(plain fast-xml-parser, plate, list and time picked: the work ours cannot skip); the bare floor (no parse) is shown for scale`,
  );
  console.table(
    cases.map(([name, ours, floor, parse]) => ({
      case: name,
      'ours / parsing floor CPU per event': spread(
        ours.map((o, i) => o.cpuPerEvent / (parse[i] as RunFigures).cpuPerEvent),
        2,
      ),
      guard: verdict(ours.map((o, i) => o.cpuPerEvent / (parse[i] as RunFigures).cpuPerEvent)),
      'ours / bare floor CPU per event': spread(
        ours.map((o, i) => o.cpuPerEvent / (floor[i] as RunFigures).cpuPerEvent),
        2,
      ),
      'ours to answer p99 ms': spread(
        ours.map((o) => o.answer.p99),
        2,
      ),
      'floor to answer p99 ms': spread(
        floor.map((o) => o.answer.p99),
        2,
      ),
    })),
  );

  const all = cases.flatMap(([, ours, floor, parse]) => [...ours, ...floor, ...parse]);
  const pooled = [...byRate.values()].flatMap((f) => [...f.ours, ...f.floor, ...f.parse]);
  console.log(
    `Load process: ${POOL_CONNECTIONS} keep-alive connections in the pool (most posts in flight at once: ${Math.max(...pooled.map((f) => f.maxInFlight))}, ` +
      `most posts waiting for a free connection: ${Math.max(...pooled.map((f) => f.maxQueued))}); ` +
      `cameras: one connection each from 127.0.x.y (most posts waiting for their camera's previous one: ${Math.max(...[...fleet.ours, ...fleet.floor].map((f) => f.maxQueued))}); ` +
      `its own lateness in sending, p99: ${spread(all.map((f) => f.sendLagP99), 2)} ms; its CPU per post: ${spread(all.map((f) => f.loadCpuPerPost), 1)} us`,
  );

  console.log(`\nNode-RED heap after GC (global.gc() twice) over ${HEAP_EVENTS.toLocaleString('en')} events at ${HEAP_RATE.toLocaleString('en')}/s`);
  const signed = (bytes: number): string => `${bytes >= 0 ? '+' : ''}${mb(bytes)}`;
  const reserved = (probe: RuntimeProbe): number => probe.heapTotal ?? NaN;
  console.table([
    { when: 'before', 'heap MB': mb(heap.before.heapUsed), 'heap reserved MB': mb(reserved(heap.before)), 'RSS MB': mb(heap.before.rss), fds: heap.before.fds },
    { when: `after ${heap.heapRun.events.toLocaleString('en')} events`, 'heap MB': mb(heap.after.heapUsed), 'heap reserved MB': mb(reserved(heap.after)), 'RSS MB': mb(heap.after.rss), fds: heap.after.fds },
    {
      when: 'growth',
      'heap MB': signed(heap.after.heapUsed - heap.before.heapUsed),
      'heap reserved MB': signed(reserved(heap.after) - reserved(heap.before)),
      'RSS MB': signed(heap.after.rss - heap.before.rss),
      fds: heap.after.fds - heap.before.fds,
    },
  ]);
  console.log(`event server after the run: ${JSON.stringify(heap.serverAfter)} (connections open, senders holding them, body bytes being received)`);

  const mbOf = (probes: MemoryProbe[], field: 'heapUsed' | 'heapTotal' | 'rss' | 'external'): string =>
    spread(
      probes.map((p) => p[field] / 1048576),
      1,
    );
  const kbPerConnection = (probes: MemoryProbe[], base: MemoryProbe[], field: 'heapUsed' | 'heapTotal' | 'rss' | 'external'): string =>
    spread(
      probes.map((p, i) => (p[field] - (base[i] as MemoryProbe)[field]) / CAMERAS / 1024),
      1,
    );
  console.log(
    `\nMemory after GC with ${CAMERAS} camera connections, Node-RED (ours) and the floor, median (min..max) over ${REPS} repetitions; ` +
      `event server cap maxConnections ${MAX_CONNECTIONS} in the flow (the default, 256, would refuse half the cameras)`,
  );
  const memoryRows: Array<Record<string, string>> = [];
  for (const target of TARGETS) {
    const m = fleet.memory[target];
    const stages: Array<[string, MemoryProbe[]]> = [
      ['no connections', m.none],
      [`${CAMERAS} connected, before any post`, m.idle],
      [`${CAMERAS} connected, after the run`, m.used],
    ];
    for (const [when, probes] of stages) {
      memoryRows.push({ receiver: target, when, 'heap MB': mbOf(probes, 'heapUsed'), 'heap reserved MB': mbOf(probes, 'heapTotal'), 'external MB': mbOf(probes, 'external'), 'RSS MB': mbOf(probes, 'rss') });
    }
    for (const [when, probes] of stages.slice(1)) {
      memoryRows.push({
        receiver: target,
        when: `per connection, ${when.replace(`${CAMERAS} connected, `, '')} (KB)`,
        'heap MB': kbPerConnection(probes, m.none, 'heapUsed'),
        'heap reserved MB': kbPerConnection(probes, m.none, 'heapTotal'),
        'external MB': kbPerConnection(probes, m.none, 'external'),
        'RSS MB': kbPerConnection(probes, m.none, 'rss'),
      });
    }
  }
  console.table(memoryRows);
  console.log(`event server with the cameras connected: ${JSON.stringify(fleet.server[0])} (connections, senders, body bytes being received)`);
}

// ---------------------------------------------------------------------------------------------
// Profile summary

/** A measured run, on the monotonic clock (ms), which is also the clock of V8's profiles (us). */
interface ProfileWindow {
  from: number;
  to: number;
  events: number;
}

let profileWindows: Record<Target, ProfileWindow[]> | undefined;

function profileArgs(name: string): string[] {
  return PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, '--cpu-prof-name', `${name}.${process.pid}.cpuprofile`] : [];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Sampled time per event inside the measured runs, by where the code comes from and by function (us). */
function sampledPerEvent(profile: Profile, windows: ProfileWindow[]): { origins: Map<string, number>; functions: Map<string, number>; total: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const events = windows.reduce((sum, w) => sum + w.events, 0);
  const origins = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    // The time up to the next sample is spent where this one found the thread.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i] as number);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    const ms = at / 1000;
    if (!windows.some((w) => ms >= w.from && ms <= w.to)) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${lineNumber + 1}`;
    const where = origin(functionName, url);
    functions.set(key, (functions.get(key) ?? 0) + dt / events);
    origins.set(where, (origins.get(where) ?? 0) + dt / events);
    total += dt / events;
  }
  return { origins, functions, total };
}

/**
 * Where the receivers' time goes, per event, inside the measured runs: the profile of Node-RED
 * beside the floor's. Sampled time is wall time while the thread was not idle: on a busy machine
 * it counts time the thread waited for a core, so compare the two columns, not the absolute values.
 */
function summarizeProfiles(dir: string, windows: Record<Target, ProfileWindow[]>): void {
  const read = (name: string): Profile | undefined => {
    const file = readdirSync(dir).find((f) => f === `${name}.${process.pid}.cpuprofile`);
    return file ? (JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile) : undefined;
  };
  const oursProfile = read('node-red');
  const floorProfile = read('floor');
  if (!oursProfile || !floorProfile) {
    console.log(`no profiles of this run in ${dir}`);
    return;
  }
  const ours = sampledPerEvent(oursProfile, windows.ours);
  const floor = sampledPerEvent(floorProfile, windows.floor);
  const parseProfile = read('parse');
  const parse = parseProfile ? sampledPerEvent(parseProfile, windows.parse) : undefined;
  const us = (value: number | undefined): string => (value ?? 0).toFixed(1);
  console.log(`\nProfiles (${dir}): sampled time per event in the measured runs, us (self time; compare the columns)`);
  const origins = [...new Set([...ours.origins.keys(), ...floor.origins.keys()])].sort((a, b) => (ours.origins.get(b) ?? 0) - (ours.origins.get(a) ?? 0));
  console.table([
    ...origins.slice(0, 18).map((where) => ({ where, ours: us(ours.origins.get(where)), 'parsing floor': us(parse?.origins.get(where)), floor: us(floor.origins.get(where)) })),
    { where: 'all', ours: us(ours.total), 'parsing floor': us(parse?.total), floor: us(floor.total) },
  ]);
  console.log('Node-RED, by function (us per event, self time):');
  console.table(
    [...ours.functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([what, value]) => ({ what, ours: us(value), floor: us(floor.functions.get(what)) })),
  );
}

function origin(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : functionName.startsWith('RegExp:') ? '(regular expressions)' : `(native) ${functionName}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:').replace(/\/.*$/, '').replace(/^node:(_http|http).*$/, 'node:http');
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const ours = /\/dist\/((lib|nodes|bench)(\/[^/]+(?=\/))?)/.exec(url);
  return ours ? `ipcam ${ours[1] as string}` : url;
}

