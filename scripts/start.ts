/**
 * `npm start`: the demo. Starts the simulator and a Node-RED bound to 127.0.0.1 with a throwaway
 * user dir, this package and its Dashboard 2 widgets (packages/node-red-dashboard-2-ipcam)
 * installed into it and the example flows wired to the simulator.
 * Ctrl-C stops both and removes the user dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { simulatorMac, startSimulator, type Simulator } from '../lib/simulator';

const ROOT = resolve(__dirname, '..', '..');
const PACKAGE = 'node-red-contrib-ipcam';
/** Dashboard 2, a devDependency: the gate console example is built on it. */
const DASHBOARD = '@flowfuse/node-red-dashboard';
/** This repository's Dashboard 2 widgets, a package of their own (an npm workspace). */
const WIDGETS = 'node-red-dashboard-2-ipcam';
const WIDGETS_ROOT = join(ROOT, 'packages', WIDGETS);
const DEMO_USER = 'admin';
const DEMO_PASSWORD = 'admin';

interface FlowNode {
  id: string;
  type: string;
  [key: string]: unknown;
}

export interface DemoOptions {
  uiPort: number;
  simPort: number;
  /** Node-RED's output: inherit it (the demo) or drop it (tests). */
  quiet?: boolean;
  /**
   * "Search network" also sends the multicast probe onto the LAN (`npm start` with
   * `IPCAM_DEMO_MULTICAST=1`, as a real search does); the demo's simulators are always probed on
   * their own UDP ports. Off by default: nothing leaves the machine.
   */
  discoveryMulticast?: boolean;
  /** Node-RED's output, as it comes (tests that check it for warnings); overrides `quiet`. */
  onOutput?: (text: string) => void;
  /**
   * Where the examples' event servers listen: absent = their own ports (5002, 5003, 5004); a port =
   * that one and the next ones, in the order of the examples' ports; 0 = free ports (a second
   * demo or a test run beside a running demo). The texts, names and simulated posts follow.
   */
  eventPort?: number;
  /**
   * A broker for the Home Assistant example (`npm start` with `IPCAM_DEMO_MQTT=mqtt://host:1883`):
   * its broker node connects there. Without it, the node keeps its placeholder and stays disconnected.
   */
  mqtt?: string;
}

export interface Demo {
  url: string;
  simulator: Simulator;
  /** The simulators of example devices on other ports than 8080 (the fleet example's gates). */
  fleet: Simulator[];
  /** The port each example event server listens on, by the port the example gives it ('5002'). */
  eventPorts: ReadonlyMap<string, number>;
  userDir: string;
  /** Resolves when Node-RED answers HTTP. */
  ready: Promise<void>;
  /** Resolves when the Node-RED process has ended, for whatever reason. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** The port of the examples' devices that the demo's main simulator answers. */
const EXAMPLE_SIM_PORT = '8080';

/**
 * Every example's nodes, each id once: the examples share one device node for the simulator (the
 * same id in every file, as importing a second example into the editor reuses the first's), so
 * its later copies are dropped. A shared id whose copies differ is a mistake in the examples.
 */
export function exampleNodes(): FlowNode[] {
  const byId = new Map<string, { node: FlowNode; file: string }>();
  for (const file of readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.json')).sort()) {
    for (const node of JSON.parse(readFileSync(join(ROOT, 'examples', file), 'utf8')) as FlowNode[]) {
      const first = byId.get(node.id);
      if (first === undefined) byId.set(node.id, { node, file });
      else if (JSON.stringify(first.node) !== JSON.stringify(node)) throw new Error(`examples/${file} and examples/${first.file} hold different nodes of id ${node.id}`);
    }
  }
  return [...byId.values()].map((entry) => entry.node);
}

/** Ports of example devices other than 8080 (the fleet example's gates): each gets a simulator of its own. */
function otherDevicePorts(nodes: FlowNode[]): string[] {
  const ports = nodes.filter((n) => n.type === 'ipcam-device').map((n) => String(n['port'] ?? EXAMPLE_SIM_PORT));
  return [...new Set(ports)].filter((port) => port !== EXAMPLE_SIM_PORT).sort();
}

/** The ports of the examples' event servers, as the examples give them, in order. */
function eventServerPorts(nodes: FlowNode[]): string[] {
  return [...new Set(nodes.filter((n) => n.type === 'ipcam-event-server').map((n) => String(n['port'] ?? '5002')))].sort();
}

/**
 * Where each example event server listens in this demo: its own port, `base` and the next ones,
 * or (base 0) a free port each, so that a second demo or a test run beside one never collides.
 */
async function demoEventPorts(nodes: FlowNode[], base: number | undefined): Promise<Map<string, number>> {
  const ports = new Map<string, number>();
  for (const [i, port] of eventServerPorts(nodes).entries()) ports.set(port, base === undefined ? Number(port) : base === 0 ? await freeTcpPort() : base + i);
  return ports;
}

/** A TCP port free on 127.0.0.1 now (the event server binds it a moment later). */
async function freeTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Texts of the examples that name a port the demo moved: tab infos, node names, simulated posts. */
const TEXT_FIELDS = ['info', 'name', 'payload', 'url'];

/**
 * The examples' texts as this demo runs them: a port the demo moved (the event servers', the
 * simulator's, Node-RED's own) reads as the port it listens on.
 */
function withPorts(node: FlowNode, moved: ReadonlyMap<string, number>): void {
  for (const field of TEXT_FIELDS) {
    const text = node[field];
    if (typeof text !== 'string') continue;
    node[field] = text.replace(/(?<![\d.])(\d{2,5})(?!\d)/g, (whole, port: string) => {
      const to = moved.get(port);
      return to === undefined ? whole : String(to);
    });
  }
}

/**
 * Example flows with every `ipcam-device` pointed at the simulator (a device of another port at
 * the simulator started for that port), the event servers on the demo's ports; credentials
 * beside them.
 */
function demoFlows(
  nodes: FlowNode[],
  simPort: number,
  fleetPorts: ReadonlyMap<string, number>,
  eventPorts: ReadonlyMap<string, number> = new Map(),
  uiPort = 1880,
  mqtt?: string,
): { flows: FlowNode[]; credentials: Record<string, { username: string; password: string }> } {
  const flows: FlowNode[] = [];
  const credentials: Record<string, { username: string; password: string }> = {};
  // The ports the texts name that listen elsewhere in this demo.
  const moved = new Map<string, number>([...eventPorts].filter(([from, to]) => String(to) !== from));
  if (uiPort !== 1880) moved.set('1880', uiPort);
  if (simPort !== Number(EXAMPLE_SIM_PORT)) moved.set(EXAMPLE_SIM_PORT, simPort);
  for (const node of nodes) {
    if (node.type === 'ipcam-event-server') node['port'] = String(eventPorts.get(String(node['port'])) ?? node['port']);
    if (node.type === 'ipcam-device') {
      node['host'] = '127.0.0.1';
      node['port'] = String(fleetPorts.get(String(node['port'])) ?? simPort);
      credentials[node.id] = { username: DEMO_USER, password: DEMO_PASSWORD };
    }
    // Like the rest of the demo, its event server answers this machine only.
    if (node.type === 'ipcam-event-server') node['bind'] = '127.0.0.1';
    if (node.type === 'mqtt-broker' && mqtt) Object.assign(node, demoBroker(mqtt));
    // "Simulate a car" and the like call the simulator's control API (url), which posts to the
    // event server (payload); the texts name both.
    if (node.type !== 'ipcam-device') withPorts(node, moved);
    flows.push(node);
  }
  return { flows, credentials };
}

/** A throwaway Node-RED user dir with this package installed the way `npm install <folder>` does it: a link to this checkout. */
export function userDirWithPackage(prefix: string): string {
  const userDir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(userDir, 'node_modules'));
  symlinkSync(ROOT, join(userDir, 'node_modules', PACKAGE), 'dir');
  writeFileSync(join(userDir, 'package.json'), JSON.stringify({ name: prefix.replace(/-$/, ''), private: true, dependencies: { [PACKAGE]: `file:${ROOT}` } }, null, 2));
  return userDir;
}

/**
 * Links this checkout's Dashboard 2 into the user dir, as a palette install would put it there:
 * Node-RED then loads it whichever node_modules Node-RED itself was started from. This
 * repository's widget package goes in beside it (linkWidgets).
 */
export function linkDashboard(userDir: string): void {
  linkWidgets(userDir);
  let dir: string;
  try {
    dir = dirname(require.resolve(`${DASHBOARD}/package.json`, { paths: [ROOT] }));
  } catch {
    console.warn(`ipcam demo: ${DASHBOARD} is not installed (npm install): the gate console example will show as unknown nodes`);
    return;
  }
  mkdirSync(join(userDir, 'node_modules', dirname(DASHBOARD)), { recursive: true });
  symlinkSync(dir, join(userDir, 'node_modules', DASHBOARD), 'dir');
}

/**
 * The widget package (packages/node-red-dashboard-2-ipcam) installed into the user dir the way
 * `npm install <folder>` does it: a link, and a dependency in the user dir's package.json, which
 * is where Dashboard 2 looks for third-party widgets (packages named node-red-dashboard-2-*).
 */
export function linkWidgets(userDir: string): void {
  symlinkSync(WIDGETS_ROOT, join(userDir, 'node_modules', WIDGETS), 'dir');
  const file = join(userDir, 'package.json');
  const project = JSON.parse(readFileSync(file, 'utf8')) as { dependencies?: Record<string, string> };
  project.dependencies = { ...project.dependencies, [WIDGETS]: `file:${WIDGETS_ROOT}` };
  writeFileSync(file, JSON.stringify(project, null, 2));
}

/** Credentials as Node-RED stores them with a `credentialSecret`: AES-256-CTR, key SHA-256 of the secret, IV in front. */
function encryptedCredentials(secret: string, credentials: object): { $: string } {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-ctr', createHash('sha256').update(secret).digest(), iv);
  return { $: iv.toString('hex') + cipher.update(JSON.stringify(credentials), 'utf8', 'base64') + cipher.final('base64') };
}

/** The example's broker node pointed at `IPCAM_DEMO_MQTT` (`mqtt://host:port`, `mqtts://` for TLS), connecting by itself. */
function demoBroker(url: string): Record<string, unknown> {
  const parsed = new URL(url);
  if (parsed.protocol !== 'mqtt:' && parsed.protocol !== 'mqtts:') throw new Error(`IPCAM_DEMO_MQTT must be mqtt://host:port or mqtts://host:port, got ${parsed.protocol}`);
  return { broker: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port || (parsed.protocol === 'mqtts:' ? '8883' : '1883'), usetls: parsed.protocol === 'mqtts:', autoConnect: true };
}

function prepareUserDir(
  nodes: FlowNode[],
  ports: { sim: number; fleet: ReadonlyMap<string, number>; events: ReadonlyMap<string, number>; ui: number },
  discovery: { targets: string[]; multicast: boolean },
  mqtt?: string,
): string {
  const uiPort = ports.ui;
  const userDir = userDirWithPackage('ipcam-demo-');
  linkDashboard(userDir);
  const { flows, credentials } = demoFlows(nodes, ports.sim, ports.fleet, ports.events, ports.ui, mqtt);
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(flows, null, 2));
  // The demo's credentials are encrypted as Node-RED keeps them (a secret of this run only), so
  // it neither warns about unencrypted credentials nor leaves a password in clear on disk.
  const credentialSecret = randomBytes(24).toString('hex');
  writeFileSync(join(userDir, 'flows_cred.json'), JSON.stringify(encryptedCredentials(credentialSecret, credentials)));
  writeFileSync(
    join(userDir, 'settings.js'),
    `module.exports = ${JSON.stringify(
      {
        uiHost: '127.0.0.1',
        uiPort,
        flowFile: 'flows.json',
        credentialSecret,
        // The dialog's "Search network" finds the demo's simulators on their own UDP ports.
        ipcamDiscovery: discovery,
        // Files the example flows write (nightly backups) land in the throwaway user dir.
        fileWorkingDirectory: userDir,
        telemetry: { enabled: false },
        diagnostics: { enabled: false },
        // `projects: {}`: projects stay off, as by default, without a warning about them.
        editorTheme: { tours: false, projects: {} },
        logging: { console: { level: 'info', metrics: false, audit: false } },
      },
      null,
      2,
    )};\n`,
  );
  return userDir;
}

export async function startDemo(options: DemoOptions): Promise<Demo> {
  const simulator = await startSimulator({ port: options.simPort, username: DEMO_USER, password: DEMO_PASSWORD });
  const nodes = exampleNodes();
  // The fleet example's gates: one simulator each, on any free port (8081-8083 may be taken),
  // each a device of its own (MAC, serial number, the name of its device node), as real gates are.
  const fleet = new Map<string, Simulator>();
  for (const [i, port] of otherDevicePorts(nodes).entries()) {
    const name = nodes.find((n) => n.type === 'ipcam-device' && String(n['port']) === port)?.['name'];
    fleet.set(port, await startSimulator({ port: 0, username: DEMO_USER, password: DEMO_PASSWORD, mac: simulatorMac(2 + i), ...(typeof name === 'string' && name !== '' && { name }) }));
  }
  const discovery = { targets: [simulator, ...fleet.values()].map((sim) => `127.0.0.1:${sim.discoveryPort}`), multicast: options.discoveryMulticast === true };
  const eventPorts = await demoEventPorts(nodes, options.eventPort);
  const userDir = prepareUserDir(nodes, { sim: simulator.port, fleet: new Map([...fleet].map(([port, sim]) => [port, sim.port])), events: eventPorts, ui: options.uiPort }, discovery, options.mqtt);
  const red: ChildProcess = spawn(process.execPath, [require.resolve('node-red/red.js'), '--userDir', userDir, '--settings', join(userDir, 'settings.js')], {
    stdio: options.onOutput ? ['ignore', 'pipe', 'pipe'] : options.quiet ? 'ignore' : 'inherit',
  });
  const onOutput = options.onOutput;
  if (onOutput) for (const stream of [red.stdout, red.stderr]) stream?.on('data', (chunk: Buffer) => onOutput(chunk.toString('utf8')));
  const url = `http://127.0.0.1:${options.uiPort}`;
  const exited = new Promise<void>((done) => red.once('exit', () => done()));

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (red.exitCode === null && red.signalCode === null) red.kill('SIGINT');
      const forced = setTimeout(() => red.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(forced);
      await simulator.close();
      for (const sim of fleet.values()) await sim.close();
      rmSync(userDir, { recursive: true, force: true });
    })());

  const ready = waitForHttp(url, exited);
  return { url, simulator, fleet: [...fleet.values()], eventPorts, userDir, ready, exited, stop };
}

/** Resolves when `url` answers 2xx; rejects when the process has exited or after a minute. */
export async function waitForHttp(url: string, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (let i = 0; i < 600 && !gone; i++) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(gone ? 'Node-RED exited before it was ready' : `Node-RED did not answer at ${url}`);
}

async function main(): Promise<void> {
  const uiPort = Number(process.env['PORT'] ?? 1880);
  const simPort = Number(process.env['IPCAM_SIM_PORT'] ?? 8080);
  // The event servers move with PORT: IPCAM_EVENT_PORT names the first; a PORT of its own (a
  // second demo beside the first) takes free ones; else the examples' 5002, 5003 and 5004.
  const eventPort = process.env['IPCAM_EVENT_PORT'] !== undefined ? Number(process.env['IPCAM_EVENT_PORT']) : uiPort !== 1880 ? 0 : undefined;
  // Multicast onto the LAN only when asked: the demo's own simulators are found by unicast.
  const mqtt = process.env['IPCAM_DEMO_MQTT'];
  const demo = await startDemo({ uiPort, simPort, ...(eventPort !== undefined && { eventPort }), discoveryMulticast: process.env['IPCAM_DEMO_MULTICAST'] === '1', ...(mqtt && { mqtt }) });
  let exiting = false;
  const shutdown = (code: number): void => {
    if (exiting) return;
    exiting = true;
    void demo.stop().then(() => process.exit(code));
  };
  process.on('SIGINT', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));
  void demo.exited.then(() => shutdown(1));
  try {
    await demo.ready;
  } catch (err) {
    console.error(`ipcam demo: ${(err as Error).message}`);
    shutdown(1);
    return;
  }
  console.log(`\nipcam demo ready:\n  Node-RED   ${demo.url}\n  simulator  ${demo.simulator.url} (user ${DEMO_USER}, password ${DEMO_PASSWORD})\n  gates      ${demo.fleet.map((s) => s.url).join(', ')} (the fleet example)\n  events     ${[...demo.eventPorts.values()].map((p) => `127.0.0.1:${p}`).join(', ')} (the examples' event servers)\n  snapshot   ${demo.url}/snapshot\n  dashboard  ${demo.url}/dashboard/gate\n  MQTT       ${mqtt ?? 'none: IPCAM_DEMO_MQTT=mqtt://host:1883 connects the Home Assistant example'}\nCtrl-C stops both.\n`);
}

if (require.main === module) {
  void main().catch((err: unknown) => {
    console.error(`ipcam demo: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
