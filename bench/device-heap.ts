/**
 * What one ipcam-device config node holds on the heap: a real Node-RED runtime (a child process)
 * with no devices, then with N device nodes against simulated devices in another process, a heap
 * snapshot of each, and the difference per device grouped by what V8 calls each object
 * (constructor, closure, or an array by the property that holds it).
 *
 * `node dist/bench/device-heap.js` (not part of `npm run bench`: it is a diagnosis, not a figure
 * to follow). Environment: IPCAM_HEAP_DEVICES (default 200), IPCAM_HEAP_READ=1 to also snapshot
 * the devices after one read each (the heartbeat's first beat, set to 10 s), IPCAM_HEAP_TOP
 * (rows printed, default 40). Snapshots are written to a temporary directory and removed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChildRuntime, type FlowNode, type RuntimeProbe } from '../test/runtime-child';
import { PASSWORD, USER } from './measure';
import { startSimulatorProcess } from './sim-process';

const DEVICES = Number(process.env['IPCAM_HEAP_DEVICES'] ?? 200);
const TOP = Number(process.env['IPCAM_HEAP_TOP'] ?? 40);
const TAB = 'heap-tab';

interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Count and bytes of each group of objects in a snapshot. */
type Groups = Map<string, { count: number; size: number }>;

function devicesFlow(ports: number[], heartbeat: string): FlowNode[] {
  const nodes: FlowNode[] = [{ id: TAB, type: 'tab', label: 'heap' }];
  ports.forEach((port, i) => {
    nodes.push({
      id: `heap-device-${i}`,
      type: 'ipcam-device',
      name: `device ${i}`,
      host: '127.0.0.1',
      port: String(port),
      protocol: 'http',
      auth: 'auto',
      tlsVerify: true,
      timeout: '',
      heartbeat,
      credentials: { username: USER, password: PASSWORD },
    });
  });
  return nodes;
}

/** Groups a snapshot's objects: objects and closures by name, arrays and the rest by type, name and the property that holds them. */
function groupsOf(file: string): Groups {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshotFile;
  const { meta } = snap.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [nType, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const count = snap.nodes.length / nf;
  // The first holder of each node: which object and which property (for arrays and strings).
  const holder = new Array<string | undefined>(count);
  let edge = 0;
  for (let n = 0; n < count; n++) {
    const from = n * nf;
    const fromName = nodeTypes[snap.nodes[from + nType] as number] === 'object' ? (snap.strings[snap.nodes[from + nName] as number] as string) : (nodeTypes[snap.nodes[from + nType] as number] as string);
    const edges = snap.nodes[from + nEdges] as number;
    for (let e = 0; e < edges; e++, edge += ef) {
      const to = (snap.edges[edge + eTo] as number) / nf;
      if (holder[to] !== undefined) continue;
      const kind = edgeTypes[snap.edges[edge + eType] as number];
      if (kind === 'weak') continue;
      const nameOrIndex = snap.edges[edge + eName] as number;
      const prop = kind === 'element' || kind === 'hidden' ? '[]' : (snap.strings[nameOrIndex] ?? String(nameOrIndex));
      holder[to] = `${fromName}.${prop}`;
    }
  }
  const groups: Groups = new Map();
  for (let n = 0; n < count; n++) {
    const at = n * nf;
    const type = nodeTypes[snap.nodes[at + nType] as number] as string;
    const name = snap.strings[snap.nodes[at + nName] as number] as string;
    const key = type === 'object' || type === 'closure' ? `${type} ${name}` : `${type}${type === 'string' || type === 'number' ? '' : ` ${name.slice(0, 40)}`} <- ${holder[n] ?? '?'}`;
    const group = groups.get(key) ?? { count: 0, size: 0 };
    group.count += 1;
    group.size += snap.nodes[at + nSize] as number;
    groups.set(key, group);
  }
  return groups;
}

async function snapshot(runtime: ChildRuntime, dir: string, label: string): Promise<{ groups: Groups; probe: RuntimeProbe }> {
  const probe = await runtime.settledProbe(500);
  const before = new Set(readdirSync(dir));
  process.kill(runtime.pid as number, 'SIGWINCH');
  for (let waited = 0; ; waited += 500) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (file !== undefined) {
      // The snapshot is written on the runtime's main thread: it answers again once the file is whole.
      const path = join(dir, file);
      // (SIGWINCH: Node-RED stops on SIGUSR2. A keep-alive connection the runtime closed while it was busy fails once: ask again.)
      await runtime.cpu().catch(() => runtime.cpu());
      const size = statSync(path).size;
      console.log(`${label}: heap ${(probe.heapUsed / 1048576).toFixed(2)} MB, ${probe.fds} descriptors, snapshot ${(size / 1048576).toFixed(0)} MB`);
      const groups = groupsOf(path);
      rmSync(path);
      return { groups, probe };
    }
    if (waited > 120_000) throw new Error('no heap snapshot in two minutes');
  }
}

function printDiff(title: string, a: Groups, b: Groups, units: number): void {
  const rows: Array<{ group: string; 'count/device': string; 'bytes/device': number }> = [];
  let total = 0;
  for (const [key, g] of b) {
    const base = a.get(key) ?? { count: 0, size: 0 };
    const bytes = (g.size - base.size) / units;
    total += bytes;
    if (Math.abs(bytes) >= 8) rows.push({ group: key.slice(0, 110), 'count/device': ((g.count - base.count) / units).toFixed(2), 'bytes/device': Math.round(bytes) });
  }
  for (const [key, g] of a) if (!b.has(key)) total -= g.size / units;
  rows.sort((x, y) => y['bytes/device'] - x['bytes/device']);
  console.log(`\n## ${title}: ${(total / 1024).toFixed(1)} KB per device in the snapshots (self sizes), top ${TOP}`);
  console.table(rows.slice(0, TOP));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ipcam-heap-'));
  const cwd = process.cwd();
  process.chdir(dir);
  const sim = await startSimulatorProcess(DEVICES);
  const runtime = new ChildRuntime({ nodeArgs: ['--heapsnapshot-signal=SIGWINCH'] });
  try {
    await runtime.start();
    await runtime.deploy([{ id: TAB, type: 'tab', label: 'heap' }]);
    await sleep(3000);
    const empty = await snapshot(runtime, dir, 'no devices');
    await runtime.deploy(devicesFlow(sim.ports, process.env['IPCAM_HEAP_READ'] === '1' ? '10' : ''));
    await sleep(3000);
    const idle = await snapshot(runtime, dir, `${DEVICES} devices, nothing sent`);
    console.log(`heap per device node: ${((idle.probe.heapUsed - empty.probe.heapUsed) / DEVICES / 1024).toFixed(1)} KB (heapUsed after GC)`);
    printDiff(`${DEVICES} devices, nothing sent, minus none`, empty.groups, idle.groups, DEVICES);
    if (process.env['IPCAM_HEAP_READ'] === '1') {
      // The first beat (identity read) 10 s after the deploy; the snapshot right after it.
      await sleep(9000);
      const read = await snapshot(runtime, dir, `${DEVICES} devices after one read each`);
      console.log(`heap per device after one read: ${((read.probe.heapUsed - empty.probe.heapUsed) / DEVICES / 1024).toFixed(1)} KB; ${((read.probe.fds - idle.probe.fds) / DEVICES).toFixed(2)} descriptors per device more`);
      printDiff(`${DEVICES} devices after one read, minus nothing sent`, idle.groups, read.groups, DEVICES);
    }
  } catch (err) {
    console.log(runtime.output.slice(-2000), "exit", runtime.exitCode, runtime.alive);
    throw err;
  } finally {
    await runtime.stop();
    await sim.stop();
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
