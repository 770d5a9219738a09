/**
 * A fleet at idle: 200 devices, each with an input monitor and a detection stream, in ONE real
 * Node-RED runtime (a child process), against simulated devices in other processes.
 *
 * - Memory per idle stream: RSS and heap after a forced GC with the streams open, minus the same
 *   runtime process before, with the 200 device nodes and no stream nodes, each probe taken after
 *   a comparable idle time (RSS shrinks for a while after start and after a deploy).
 * - CPU at idle: CPU time of the runtime per second of wall time, side by side with an empty
 *   runtime and with the floor: a bare node:http process holding the same streams open (a socket
 *   each, every byte read, nothing parsed; bench/fleet-floor.ts).
 *
 * Idle: no input changes and no detection. An input monitor then carries nothing after the
 * states it opens with (field notes: quiet for hours); a detection stream carries what the
 * device sends anyway, its levels about once a second. The detection nodes emit on change, so
 * that idle levels make no messages (with 'every', each reading is a message by the user's choice).
 *
 * Environment: IPCAM_BENCH_DEVICES (default 200; IPCAM_BENCH_DEVICES=1000 for the scale of a
 * large site, a far longer run), IPCAM_BENCH_IDLE_SECONDS
 * (default 60; the devices-only phase idles half as long). Two to four minutes with the defaults
 * (two idle windows, then up to 30 s for the devices to drop their keep-alive connections).
 * IPCAM_BENCH_FLEET_PROFILE=<dir>: both stream runtimes run with --cpu-prof into that directory
 * (`fleet-monitors.*.cpuprofile`, `fleet-both.*.cpuprofile`), and the bench prints the idle
 * window on the profiles' clock (process.hrtime, microseconds) so that a summary can keep only
 * its samples: startup and deploys are no idle cost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface, type Interface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChildRuntime, type FlowNode, type RuntimeCpu, type RuntimeProbe } from '../test/runtime-child';
import { PASSWORD, USER } from './measure';
import { formatSpread, spreadOf, startSimulatorProcess, type SimulatorProcess, type Spread } from './sim-process';

const DEVICES = envNumber('IPCAM_BENCH_DEVICES', 200);
const IDLE_SECONDS = envNumber('IPCAM_BENCH_IDLE_SECONDS', 60);
/** A CPU window is cut in this many samples (median and spread over them). */
const CPU_SAMPLES = 6;
const MEMORY_PROBES = 5;
/** Wait inside each probe between two collections, so that freed pages are returned (ms). */
const PROBE_SETTLE_MS = 500;
/** Devices per simulator process: a few processes share the devices' work. */
const SIM_PROCESSES = 4;
/** Before a CPU window: the connections and first reads of the streams are over. */
const SETTLE_MS = 5000;
/** Goal of issue 13 (KB per idle stream). */
const GOAL_KB_PER_STREAM = 50;
const TAB = 'fleet-tab';
const MONITOR_PATH = '/cgi-bin/admin/input?monitor=';
const DETECTION_PATH = '/cgi-bin/admin/detection?type=motion';
const PROFILE_DIR = process.env['IPCAM_BENCH_FLEET_PROFILE'];

type Streams = 'none' | 'monitors' | 'both';

/** Anything whose CPU time is sampled. */
interface Measured {
  name: string;
  streams: number;
  cpu(): Promise<RuntimeCpu>;
}

/** A runtime with streams, probed in the same process before and after its stream nodes came. */
interface StreamRuntime {
  name: string;
  streams: Streams;
  runtime: ChildRuntime;
  /** Nothing deployed. */
  bare: RuntimeProbe[];
  /** The device nodes, no stream nodes, after the first idle window. */
  devicesOnly: RuntimeProbe[];
  /** Streams open, after the second idle window. */
  idle: RuntimeProbe[];
  /** The device nodes again, the stream nodes gone. */
  after?: RuntimeProbe[];
}

function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number above 0`);
  return value;
}

function fleetFlow(ports: number[], streams: Streams): FlowNode[] {
  const nodes: FlowNode[] = [{ id: TAB, type: 'tab', label: 'fleet' }];
  ports.forEach((port, i) => {
    const device = `fleet-device-${i}`;
    nodes.push({
      id: device,
      type: 'ipcam-device',
      name: `gate ${i}`,
      host: '127.0.0.1',
      port: String(port),
      protocol: 'http',
      auth: 'auto',
      tlsVerify: true,
      timeout: '',
      credentials: { username: USER, password: PASSWORD },
    });
    if (streams === 'none') return;
    nodes.push({ id: `fleet-inputs-${i}`, type: 'ipcam-input-monitor', z: TAB, device, kind: 'input', ports: '', wires: [[]] });
    if (streams === 'both') nodes.push({ id: `fleet-motion-${i}`, type: 'ipcam-detection-stream', z: TAB, device, detection: 'motion', groups: '', mode: 'stream', emit: 'change', wires: [[]] });
  });
  return nodes;
}

function streamCount(streams: Streams): number {
  return streams === 'none' ? 0 : streams === 'monitors' ? DEVICES : 2 * DEVICES;
}

async function openStreams(sims: SimulatorProcess[]): Promise<number> {
  const counts = await Promise.all(
    sims.flatMap((sim) =>
      sim.urls.map(async (url) => {
        const res = await fetch(`${url}/_sim/io`);
        return ((await res.json()) as { openStreams: number }).openStreams;
      }),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Waits until the simulators hold `expected` open streams in all (a minute at most). */
async function waitForStreams(sims: SimulatorProcess[], expected: number, runtimes: ChildRuntime[]): Promise<number> {
  const start = performance.now();
  for (;;) {
    const open = await openStreams(sims);
    if (open >= expected) return performance.now() - start;
    const dead = runtimes.find((r) => !r.alive);
    if (dead) throw new Error(`a runtime exited:\n${dead.output.slice(-4000)}`);
    if (performance.now() - start > 60_000) throw new Error(`only ${open} of ${expected} streams opened in a minute`);
    await sleep(500);
  }
}

/** The floor process (bench/fleet-floor.ts) holding the same streams as the fleet runtime. */
class Floor implements Measured {
  readonly name = 'floor: bare node:http, same streams';
  private readonly child: ChildProcess;
  private readonly lines: Interface;
  private readonly pending: Array<(line: string) => void> = [];
  private readonly exited: Promise<unknown>;

  constructor(
    urls: string[],
    readonly streams: number,
  ) {
    this.child = spawn(process.execPath, ['--expose-gc', join(__dirname, 'fleet-floor.js'), MONITOR_PATH, DETECTION_PATH, '--', ...urls], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.exited = once(this.child, 'exit');
    this.lines = createInterface({ input: this.child.stdout as NodeJS.ReadableStream });
    this.lines.on('line', (line) => this.pending.shift()?.(line));
  }

  async ready(): Promise<void> {
    const line = await Promise.race([this.nextLine(), this.exited.then(() => 'exited')]);
    if (line !== 'ready') throw new Error(`the floor process answered ${line}`);
  }

  async cpu(): Promise<RuntimeCpu> {
    const answer = this.nextLine();
    this.child.stdin?.write('cpu\n');
    return JSON.parse(await answer) as RuntimeCpu;
  }

  /** RSS and heap after GC before the streams were opened, and now. */
  async memory(): Promise<{ before: { rss: number; heapUsed: number }; now: { rss: number; heapUsed: number } }> {
    const answer = this.nextLine();
    this.child.stdin?.write('memory\n');
    return JSON.parse(await answer) as { before: { rss: number; heapUsed: number }; now: { rss: number; heapUsed: number } };
  }

  async stop(): Promise<void> {
    this.child.stdin?.end();
    const forced = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(forced);
  }

  private nextLine(): Promise<string> {
    return new Promise((resolve) => this.pending.push(resolve));
  }
}

/** What a simulated device sends on an idle stream, read raw (no parser of ours). */
interface Wire {
  bytes: number;
  /** Bytes after the first second (the opening states of an input monitor are not idle traffic). */
  laterBytes: number;
  boundaries: number;
  close(): void;
}

function watchWire(url: string, path: string): Wire {
  const opened = performance.now();
  const req = request(`${url}${path}`, { agent: false, headers: { authorization: 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64') } }, (res: IncomingMessage) => {
    res.on('data', (chunk: Buffer) => {
      wire.bytes += chunk.length;
      if (performance.now() - opened > 1000) wire.laterBytes += chunk.length;
      wire.boundaries += chunk.toString('latin1').split('--ioboundary').length - 1;
    });
    res.on('error', () => undefined);
  });
  const wire: Wire = { bytes: 0, laterBytes: 0, boundaries: 0, close: () => req.destroy() };
  req.on('error', () => undefined);
  req.end();
  return wire;
}

/** CPU ms per second of wall time of each, sampled side by side: one value per sample. */
async function measureCpu(measured: Measured[], seconds: number): Promise<Map<string, number[]>> {
  const perName = new Map<string, number[]>(measured.map((m) => [m.name, []]));
  const sample = async (): Promise<{ at: number; cpu: RuntimeCpu[] }> => ({ at: performance.now(), cpu: await Promise.all(measured.map((m) => m.cpu())) });
  let last = await sample();
  for (let i = 0; i < CPU_SAMPLES; i++) {
    await sleep((seconds * 1000) / CPU_SAMPLES);
    const next = await sample();
    const wall = (next.at - last.at) / 1000;
    measured.forEach((m, k) => {
      const a = last.cpu[k] as RuntimeCpu;
      const b = next.cpu[k] as RuntimeCpu;
      perName.get(m.name)?.push((b.user + b.system - a.user - a.system) / 1000 / wall);
    });
    last = next;
  }
  return perName;
}

async function probeN(runtime: ChildRuntime): Promise<RuntimeProbe[]> {
  const probes: RuntimeProbe[] = [];
  for (let i = 0; i < MEMORY_PROBES; i++) probes.push(await runtime.settledProbe(PROBE_SETTLE_MS));
  return probes;
}

/**
 * A device keeps the connection of the input monitor's first read (resync) until its
 * keep-alive ends (30 s at most): wait until each runtime holds its streams' sockets and no more
 * (a minute and a half at most).
 */
async function waitForIdleSockets(runtimes: StreamRuntime[]): Promise<void> {
  const start = performance.now();
  for (;;) {
    const over: string[] = [];
    for (const r of runtimes) {
      const extra = (await r.runtime.probe()).fds - median(r.devicesOnly.map((p) => p.fds)) - streamCount(r.streams);
      if (extra > 0) over.push(`${r.name}: ${extra} descriptors more than streams`);
    }
    if (over.length === 0) return;
    if (performance.now() - start > 90_000) {
      console.log(`(still ${over.join(', ')} after 90 s: measured as they are)`);
      return;
    }
    await sleep(5000);
  }
}

function median(values: number[]): number {
  return spreadOf(values).median;
}

function mb(values: number[]): string {
  return formatSpread(spreadOf(values.map((v) => v / 1048576)), 1);
}

type ProbeField = 'rss' | 'heapUsed' | 'heapTotal' | 'external' | 'newSpace';

/** Probe i of `a` minus probe i of `b`, per unit, in KB. */
function perUnitKb(a: RuntimeProbe[], b: RuntimeProbe[], field: ProbeField, units: number): Spread {
  return spreadOf(a.map((p, i) => (p[field] - (b[i] as RuntimeProbe)[field]) / units / 1024));
}

/** RSS less the young generation's capacity: what is held, not what V8 keeps ready for allocation. */
function withoutYoung(probes: RuntimeProbe[]): RuntimeProbe[] {
  return probes.map((p) => ({ ...p, rss: p.rss - p.newSpace }));
}

function cpuTable(perName: Map<string, number[]>, measured: Array<Pick<Measured, 'name' | 'streams'>>, against: Measured): void {
  const base = perName.get(against.name) as number[];
  console.table(
    measured.map((m) => {
      const values = perName.get(m.name) as number[];
      return {
        process: m.name,
        streams: m.streams,
        'CPU ms/s': formatSpread(spreadOf(values), 2),
        [`us/s per stream over ${against.name}`]: m === against || m.streams === 0 ? '' : formatSpread(spreadOf(values.map((v, i) => ((v - (base[i] as number)) * 1000) / m.streams)), 1),
      };
    }),
  );
}

export async function fleetIdle(): Promise<void> {
  console.log(`\n## Fleet at idle: ${DEVICES} devices, each an input monitor and a detection stream (emit on change), in one Node-RED runtime`);
  console.log(`machine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  const perProcess = Math.ceil(DEVICES / SIM_PROCESSES);
  const sims: SimulatorProcess[] = [];
  const children: ChildRuntime[] = [];
  let floor: Floor | undefined;
  const started = performance.now();
  const asMeasured = (name: string, runtime: ChildRuntime, streams: number): Measured => ({ name, streams, cpu: () => runtime.cpu() });
  try {
    for (let left = DEVICES; left > 0; left -= perProcess) sims.push(await startSimulatorProcess(Math.min(perProcess, left)));
    const urls = sims.flatMap((s) => s.urls);
    const ports = sims.flatMap((s) => s.ports);
    console.log(`simulated devices: ${ports.length} in ${sims.length} processes (ipcam-simulator --count)`);

    const empty = new ChildRuntime();
    children.push(empty);
    await empty.start();
    const runtimes: StreamRuntime[] = [];
    if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
    for (const streams of ['monitors', 'both'] as const) {
      const runtime = new ChildRuntime({ nodeArgs: PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, '--cpu-prof-name', `fleet-${streams}.${process.pid}.cpuprofile`] : [] });
      children.push(runtime);
      await runtime.start();
      const name = streams === 'monitors' ? `${DEVICES} input monitors` : `${DEVICES} monitors + ${DEVICES} detection`;
      runtimes.push({ name, streams, runtime, bare: await probeN(runtime), devicesOnly: [], idle: [] });
      await runtime.deploy(fleetFlow(ports, 'none'));
    }
    const fleet = runtimes[1] as StreamRuntime;
    const emptyMeasured = asMeasured('empty runtime', empty, 0);

    // Phase 1: the device nodes alone, idle; the same idle time before the baseline probe as before the streams' probe.
    const phase1 = runtimes.map((r) => asMeasured(`${r.name} runtime, ${DEVICES} device nodes only`, r.runtime, 0));
    const cpu1 = await measureCpu([emptyMeasured, ...phase1], IDLE_SECONDS / 2);
    for (const r of runtimes) r.devicesOnly = await probeN(r.runtime);

    // Phase 2: the streams, open and idle.
    let expected = 0;
    for (const r of runtimes) {
      const deployed = performance.now();
      await r.runtime.deploy(fleetFlow(ports, r.streams));
      expected += streamCount(r.streams);
      await waitForStreams(sims, expected, children);
      console.log(`${r.name}: ${streamCount(r.streams)} streams open ${((performance.now() - deployed) / 1000).toFixed(1)} s after the deploy`);
    }
    floor = new Floor(urls, 2 * DEVICES);
    await floor.ready();
    expected += 2 * DEVICES;
    await waitForStreams(sims, expected, children);
    await sleep(SETTLE_MS);
    const firstDevice = urls[0] as string;
    const monitorWire = watchWire(firstDevice, MONITOR_PATH);
    const detectionWire = watchWire(firstDevice, DETECTION_PATH);
    const phase2 = runtimes.map((r) => asMeasured(r.name, r.runtime, streamCount(r.streams)));
    const windowStart = process.hrtime.bigint() / 1000n;
    const cpu2 = await measureCpu([emptyMeasured, ...phase2, floor], IDLE_SECONDS);
    if (PROFILE_DIR) console.log(`profiles in ${PROFILE_DIR}: idle window ${windowStart}..${process.hrtime.bigint() / 1000n} (us, the profiles' clock)`);
    const floorShown = { name: floor.name, streams: floor.streams };
    const floorStreams = floor.streams;
    monitorWire.close();
    detectionWire.close();
    const floorMemory = await floor.memory();
    await floor.stop();
    floor = undefined;

    await waitForIdleSockets(runtimes);
    for (const r of runtimes) r.idle = await probeN(r.runtime);
    await fleet.runtime.deploy(fleetFlow(ports, 'none'));
    await sleep(2000);
    fleet.after = await probeN(fleet.runtime);

    // CPU
    console.log(`\nCPU at idle (CPU ms per s of wall time, ${CPU_SAMPLES} samples, median [min..max]; processes measured side by side)`);
    console.log(`device nodes alone, ${IDLE_SECONDS / 2} s:`);
    cpuTable(cpu1, [emptyMeasured, ...phase1], emptyMeasured);
    console.log(`streams open and idle, ${IDLE_SECONDS} s:`);
    cpuTable(cpu2, [emptyMeasured, ...phase2, floorShown], emptyMeasured);
    const fleetCpu = cpu2.get((phase2[1] as Measured).name) as number[];
    const quietCpu = cpu2.get((phase2[0] as Measured).name) as number[];
    const floorCpu = cpu2.get(floorShown.name) as number[];
    const emptyCpu = cpu2.get(emptyMeasured.name) as number[];
    const ratio = spreadOf(fleetCpu.map((v, i) => (v - (emptyCpu[i] as number)) / (floorCpu[i] as number)));
    console.log(`fleet runtime over the empty runtime, x the floor (same streams, same bytes): ${formatSpread(ratio, 2)}`);
    const perDetection = spreadOf(fleetCpu.map((v, i) => ((v - (quietCpu[i] as number)) * 1000) / DEVICES));
    console.log(`a detection stream (levels about 1/s, no message): ${formatSpread(perDetection, 1)} us CPU per s (fleet runtime minus monitors-only runtime)`);

    // Memory
    console.log(`\nMemory after a forced GC (${MEMORY_PROBES} probes, each two collections ${PROBE_SETTLE_MS} ms apart; median [min..max]):`);
    const stages = (r: StreamRuntime): Array<[string, RuntimeProbe[]]> => [
      ['nothing deployed', r.bare],
      [`${DEVICES} device nodes, after ${IDLE_SECONDS / 2} s idle`, r.devicesOnly],
      [`+ ${streamCount(r.streams)} streams, after ${IDLE_SECONDS} s idle`, r.idle],
      ...(r.after ? ([['stream nodes removed again', r.after]] as Array<[string, RuntimeProbe[]]>) : []),
    ];
    console.table(
      runtimes.flatMap((r) =>
        stages(r).map(([stage, list]) => ({
          runtime: r.name,
          stage,
          'RSS MB': mb(list.map((p) => p.rss)),
          'heap used MB': mb(list.map((p) => p.heapUsed)),
          'heap total MB': mb(list.map((p) => p.heapTotal ?? 0)),
          'young gen. MB': mb(list.map((p) => p.newSpace)),
          'external MB': mb(list.map((p) => p.external ?? 0)),
          fds: median(list.map((p) => p.fds)),
        })),
      ),
    );
    const rows = [
      ...runtimes.map((r) => ({ figure: `per device node (${r.name} runtime)`, a: r.devicesOnly, b: r.bare, units: DEVICES })),
      ...runtimes.map((r) => ({ figure: `per idle stream (${r.name})`, a: r.idle, b: r.devicesOnly, units: streamCount(r.streams) })),
    ];
    console.table(
      rows.map((row) => ({
        figure: row.figure,
        'RSS KB': formatSpread(perUnitKb(row.a, row.b, 'rss', row.units), 1),
        'RSS less young gen. KB': formatSpread(perUnitKb(withoutYoung(row.a), withoutYoung(row.b), 'rss', row.units), 1),
        'heap used KB': formatSpread(perUnitKb(row.a, row.b, 'heapUsed', row.units), 1),
        'external KB': formatSpread(perUnitKb(row.a, row.b, 'external', row.units), 1),
      })),
    );
    const rssPerStream = perUnitKb(fleet.idle, fleet.devicesOnly, 'rss', 2 * DEVICES).median;
    const heapPerStream = perUnitKb(fleet.idle, fleet.devicesOnly, 'heapUsed', 2 * DEVICES).median;
    const retainedPerStream = perUnitKb(withoutYoung(fleet.idle), withoutYoung(fleet.devicesOnly), 'rss', 2 * DEVICES).median;
    const youngGrowth = (median(fleet.idle.map((p) => p.newSpace)) - median(fleet.devicesOnly.map((p) => p.newSpace))) / 1048576;
    const verdict = (kb: number): string => (kb <= GOAL_KB_PER_STREAM ? 'met' : 'MISSED');
    console.log(
      `goal <= ${GOAL_KB_PER_STREAM} KB per idle stream (${fleet.name}): heap ${heapPerStream.toFixed(1)} KB ${verdict(heapPerStream)}; ` +
        `RSS ${rssPerStream.toFixed(1)} KB ${verdict(rssPerStream)}, of which the young generation grown by ${youngGrowth.toFixed(1)} MB for the process, not per stream; ` +
        `RSS less that ${retainedPerStream.toFixed(1)} KB ${verdict(retainedPerStream)}`,
    );
    const floorRss = (floorMemory.now.rss - floorMemory.before.rss) / floorStreams / 1024;
    const floorHeap = (floorMemory.now.heapUsed - floorMemory.before.heapUsed) / floorStreams / 1024;
    console.log(
      `floor (bare node:http process, the same ${floorStreams} streams, one probe): RSS ${floorRss.toFixed(1)} KB, heap ${floorHeap.toFixed(1)} KB per stream; ` +
        `ours x the floor: heap ${(heapPerStream / floorHeap).toFixed(1)}, RSS less young gen. ${(retainedPerStream / floorRss).toFixed(1)}`,
    );
    // Scale: a camera is a device node with an input monitor and a detection stream.
    const cameraUs = median(fleetCpu.map((v, i) => ((v - (emptyCpu[i] as number)) * 1000) / DEVICES));
    // RSS of the device nodes alone is no figure (RSS shrinks for a while after start): their heap, plus the streams' RSS.
    const cameraKb = perUnitKb(fleet.devicesOnly, fleet.bare, 'heapUsed', DEVICES).median + 2 * perUnitKb(withoutYoung(fleet.idle), withoutYoung(fleet.devicesOnly), 'rss', 2 * DEVICES).median;
    const perCore = cameraUs > 0 ? Math.floor(1e6 / cameraUs / 2) : Infinity;
    console.log(
      `\nscale (${DEVICES} cameras measured, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}): a camera (device node, input monitor, detection stream at idle) costs ` +
        `${cameraUs.toFixed(0)} us CPU per s and ${cameraKb.toFixed(0)} KB (heap of the device node, RSS of its streams); at half a core each, one Node-RED holds about ${perCore.toLocaleString('en')} cameras per core ` +
        `(${(perCore * cpus().length).toLocaleString('en')} on this machine's ${cpus().length} cores: Node-RED runs on one core, the rest serves the kernel's network work), ` +
        `and ${Math.floor((1024 * 1024) / cameraKb).toLocaleString('en')} cameras per GB of RSS`,
    );
    const left = (median((fleet.after ?? []).map((p) => p.heapUsed)) - median(fleet.devicesOnly.map((p) => p.heapUsed))) / 1024;
    console.log(`stream nodes removed again: heap ${left.toFixed(0)} KB over the devices-only figure before them`);

    // The simulator's idle device, as the field notes describe one.
    console.log(
      `\nidle device on the wire (raw reader, ${IDLE_SECONDS} s): input monitor ${monitorWire.bytes} bytes, ${monitorWire.laterBytes} after its opening states; ` +
        `detection ${detectionWire.boundaries} parts (${(detectionWire.boundaries / IDLE_SECONDS).toFixed(2)}/s), ${detectionWire.boundaries > 0 ? Math.round(detectionWire.bytes / detectionWire.boundaries) : 0} bytes each`,
    );
    for (const [name, runtime] of [['empty runtime', empty], ...runtimes.map((r) => [r.name, r.runtime] as const)] as const) {
      const complaints = runtime.output.split('\n').filter((line) => /\[(warn|error)\]/.test(line) && !/Projects disabled|unencrypted credentials/.test(line));
      if (complaints.length > 0) console.log(`${name} logged ${complaints.length} warnings/errors, first: ${complaints[0] ?? ''}`);
    }
  } finally {
    await floor?.stop();
    await Promise.all(children.map((r) => r.stop()));
    await Promise.all(sims.map((s) => s.stop()));
    console.log(`(fleet bench took ${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
}
