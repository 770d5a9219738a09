/**
 * `npm start`: the demo. Starts the simulator and a Node-RED bound to 127.0.0.1 with a throwaway
 * user dir, this package installed into it and the example flows wired to the simulator.
 * Ctrl-C stops both and removes the user dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startSimulator, type Simulator } from '../lib/simulator';

const ROOT = resolve(__dirname, '..', '..');
const PACKAGE = 'node-red-contrib-ipcam';
/** Dashboard 2, a devDependency: the gate console example is built on it. */
const DASHBOARD = '@flowfuse/node-red-dashboard';
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

/**
 * Example flows with every `ipcam-device` pointed at the simulator (a device of another port at
 * the simulator started for that port); credentials beside them.
 */
function demoFlows(
  nodes: FlowNode[],
  simPort: number,
  fleetPorts: ReadonlyMap<string, number>,
  mqtt?: string,
): { flows: FlowNode[]; credentials: Record<string, { username: string; password: string }> } {
  const flows: FlowNode[] = [];
  const credentials: Record<string, { username: string; password: string }> = {};
  for (const node of nodes) {
    if (node.type === 'ipcam-device') {
      node['host'] = '127.0.0.1';
      node['port'] = String(fleetPorts.get(String(node['port'])) ?? simPort);
      credentials[node.id] = { username: DEMO_USER, password: DEMO_PASSWORD };
    }
    // Like the rest of the demo, its event server answers this machine only.
    if (node.type === 'ipcam-event-server') node['bind'] = '127.0.0.1';
    if (node.type === 'mqtt-broker' && mqtt) Object.assign(node, demoBroker(mqtt));
    // "Simulate a car" and the like call the simulator's control API.
    if (node.type === 'http request' && typeof node['url'] === 'string') node['url'] = node['url'].replace('127.0.0.1:8080/_sim/', `127.0.0.1:${simPort}/_sim/`);
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
 * Node-RED then loads it whichever node_modules Node-RED itself was started from.
 */
export function linkDashboard(userDir: string): void {
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

function prepareUserDir(nodes: FlowNode[], simPort: number, fleetPorts: ReadonlyMap<string, number>, uiPort: number, discovery: { targets: string[]; multicast: boolean }, mqtt?: string): string {
  const userDir = userDirWithPackage('ipcam-demo-');
  linkDashboard(userDir);
  const { flows, credentials } = demoFlows(nodes, simPort, fleetPorts, mqtt);
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
  // The fleet example's gates: one simulator each, on any free port (8081-8083 may be taken).
  const fleet = new Map<string, Simulator>();
  for (const port of otherDevicePorts(nodes)) fleet.set(port, await startSimulator({ port: 0, username: DEMO_USER, password: DEMO_PASSWORD }));
  const discovery = { targets: [simulator, ...fleet.values()].map((sim) => `127.0.0.1:${sim.discoveryPort}`), multicast: options.discoveryMulticast === true };
  const userDir = prepareUserDir(nodes, simulator.port, new Map([...fleet].map(([port, sim]) => [port, sim.port])), options.uiPort, discovery, options.mqtt);
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
  return { url, simulator, fleet: [...fleet.values()], userDir, ready, exited, stop };
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
  // Multicast onto the LAN only when asked: the demo's own simulators are found by unicast.
  const mqtt = process.env['IPCAM_DEMO_MQTT'];
  const demo = await startDemo({ uiPort, simPort, discoveryMulticast: process.env['IPCAM_DEMO_MULTICAST'] === '1', ...(mqtt && { mqtt }) });
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
  console.log(`\nipcam demo ready:\n  Node-RED   ${demo.url}\n  simulator  ${demo.simulator.url} (user ${DEMO_USER}, password ${DEMO_PASSWORD})\n  gates      ${demo.fleet.map((s) => s.url).join(', ')} (the fleet example)\n  snapshot   ${demo.url}/snapshot\n  dashboard  ${demo.url}/dashboard/gate\n  MQTT       ${mqtt ?? 'none: IPCAM_DEMO_MQTT=mqtt://host:1883 connects the Home Assistant example'}\nCtrl-C stops both.\n`);
}

if (require.main === module) {
  void main().catch((err: unknown) => {
    console.error(`ipcam demo: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
