/**
 * Shared set-up for the Node-RED node tests: a typed view of node-red-node-test-helper (it ships
 * no types), flows of a device, an action node, a Catch node and helper nodes, and a recorder of
 * everything a flow lets out (messages, status, errors, log entries) to search for secrets.
 */
import { strict as assert } from 'node:assert';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { Server, Socket, createServer } from 'node:net';
import { inspect } from 'node:util';
import sinon from 'sinon';
import type { Simulator } from '../lib/simulator';
import { statusWordOf } from '../lib/status/status';
import type { NodeAPI, NodeMessage, NodeStatus } from '../nodes/red';
import { SIM_USER, statusWordsByType } from './helpers';

// ---------------------------------------------------------------------------------------------
// node-red-node-test-helper, typed as far as these tests use it

/** One node of a flow as stored (the helper compares it with what the runtime loaded). */
export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  wires?: string[][];
  [key: string]: unknown;
}

export type Credentials = Record<string, Record<string, string>>;

/** A node instance of the runtime (Node-RED's Node), as far as the tests touch it. */
export interface RuntimeNode {
  id: string;
  type: string;
  credentials?: Record<string, string>;
  on(event: 'input', listener: (msg: NodeMessage) => void): void;
  receive(msg: NodeMessage): void;
  status(status: NodeStatus): void;
  error(err: unknown, msg?: NodeMessage): void;
  warn(text: unknown): void;
  /** Runtime internal: what `done(err?)` calls. Wrapped to learn when an input has finished. */
  _complete(msg: NodeMessage, err?: unknown): void;
}

export interface AdminAnswer {
  status: number;
  body: unknown;
  text: string;
}

/** The supertest call returned by `helper.request().post(...)`. */
export interface AdminCall extends PromiseLike<AdminAnswer> {
  send(body: object): AdminCall;
  set(header: string, value: string): AdminCall;
}

/** The sinon spy the helper puts on `RED.log.log`. */
export interface LogSpy {
  getCalls(): Array<{ args: unknown[] }>;
}

export type NodeModule = (RED: NodeAPI) => void;

interface TestHelper {
  init(runtimePath: string, userSettings?: Record<string, unknown>): void;
  load(nodes: NodeModule[], flow: FlowNode[], credentials?: Credentials): Promise<void>;
  /** Deploys a changed flow like the editor does (`nodes`: only the changed nodes restart). */
  setFlows(flow: FlowNode[], type: 'full' | 'flows' | 'nodes', credentials?: Credentials): Promise<void>;
  unload(): Promise<void>;
  getNode(id: string): RuntimeNode | null;
  startServer(): Promise<void>;
  stopServer(): Promise<void>;
  request(): { post(path: string): AdminCall };
  log(): LogSpy;
}

export const helper = module.require('node-red-node-test-helper') as TestHelper;
helper.init(require.resolve('node-red'));

/** The helper's spy on Node.prototype.status while a flow is loaded (node-red-node-test-helper internals). */
interface StatusSpy {
  getCalls(): Array<{ thisValue: { type?: unknown; id?: unknown } | undefined; args: unknown[] }>;
}

/**
 * Every status one of our nodes showed since the flow was loaded that no word of lib/status
 * makes for a node of its type: the help lists a node's statuses from that vocabulary, so a
 * status outside it is one the user cannot look up (and one DESIGN does not have).
 */
function statusesOutsideVocabulary(): string[] {
  const spy = (helper as unknown as { _NodePrototype?: { status?: Partial<StatusSpy> } })._NodePrototype?.status;
  if (typeof spy?.getCalls !== 'function') return [];
  const strays: string[] = [];
  const wordsOf = statusWordsByType();
  for (const call of spy.getCalls()) {
    const type = call.thisValue?.type;
    const words = typeof type === 'string' ? wordsOf.get(type) : undefined;
    if (words === undefined) continue;
    const status = call.args[0];
    const shown = typeof status === 'object' && status !== null ? (status as Record<string, string>) : { text: String(status) };
    if (statusWordOf(words, shown) === undefined) strays.push(`${type} ${String(call.thisValue?.id)}: ${JSON.stringify(status)}`);
  }
  return strays;
}

/** Every status node `id` showed since the flow was loaded, those of its constructor (its deploy) included. */
export function statusesSinceLoad(id: string): unknown[] {
  const spy = (helper as unknown as { _NodePrototype?: { status?: Partial<StatusSpy> } })._NodePrototype?.status;
  assert.ok(typeof spy?.getCalls === 'function', 'no flow is loaded');
  return spy.getCalls().filter((call) => call.thisValue?.id === id).map((call) => call.args[0]);
}

// Checked as each flow is unloaded (every node test unloads its flow after each test): a status
// outside the vocabulary fails the test that made the node show it.
{
  const unload = helper.unload.bind(helper);
  helper.unload = async (): Promise<void> => {
    const strays = statusesOutsideVocabulary();
    await unload();
    assert.deepEqual(strays, [], 'statuses that no word of lib/status makes (add the word there, and it reaches the help)');
  };
}

export function getNode(id: string): RuntimeNode {
  const node = helper.getNode(id);
  assert.ok(node, `node ${id} is not running`);
  return node;
}

// ---------------------------------------------------------------------------------------------
// Flows

export const TAB = 'f1';
export const DEVICE = 'dev1';

/** The settings of an `ipcam-device` pointing at the simulator, as the editor stores them. */
export function deviceDef(sim: Simulator | { port: number }, settings: Record<string, unknown> = {}): FlowNode {
  return {
    id: DEVICE,
    type: 'ipcam-device',
    name: 'camera',
    host: '127.0.0.1',
    port: String(sim.port),
    protocol: 'http',
    auth: 'auto',
    tlsVerify: true,
    timeout: '',
    ...settings,
  };
}

export function deviceCredentials(password: string, username = SIM_USER): Credentials {
  return { [DEVICE]: { username, password } };
}

/**
 * A tab with the node under test (`node`, wired to helper `out`), a Catch node for every node
 * (wired to helper `caught`), and the config nodes given.
 */
export function actionFlow(node: FlowNode, configs: FlowNode[]): FlowNode[] {
  return [
    { id: TAB, type: 'tab', label: 'test' },
    ...configs,
    // Flow nodes have a position: without x and y the runtime takes them for config nodes.
    { ...node, z: TAB, x: 100, y: 100, wires: [['out']] },
    { id: 'out', type: 'helper', z: TAB, x: 300, y: 100, wires: [] },
    { id: 'catch-all', type: 'catch', z: TAB, x: 100, y: 200, scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: TAB, x: 300, y: 200, wires: [] },
  ];
}

// ---------------------------------------------------------------------------------------------
// Watching a running flow

interface Spies {
  status: sinon.SinonSpy;
  error: sinon.SinonSpy;
  warn: sinon.SinonSpy;
}

export type Outcome = { kind: 'out'; msg: NodeMessage } | { kind: 'caught'; msg: NodeMessage };

/**
 * Records what a loaded action flow lets out: messages at `out` and `caught`, status, error and
 * warn calls of the watched nodes, and (through the helper's spy) every log entry.
 */
export class FlowWatch {
  readonly messages: NodeMessage[] = [];
  private readonly waiting: Array<(outcome: Outcome) => void> = [];
  private readonly calls = new Map<string, Spies>();

  constructor(watched: string[]) {
    for (const kind of ['out', 'caught'] as const) {
      getNode(kind).on('input', (msg) => {
        this.messages.push(msg);
        const next = this.waiting.shift();
        if (next) next({ kind, msg });
      });
    }
    for (const id of watched) {
      const node = getNode(id);
      const spies: Spies = { status: sinon.spy(), error: sinon.spy(), warn: sinon.spy() };
      this.calls.set(id, spies);
      for (const method of ['status', 'error', 'warn'] as const) intercept(node, method, (args) => spies[method](...args));
    }
  }

  /** Sends `msg` to `nodeId` and resolves with the first message that comes out at `out` or `caught`. */
  send(nodeId: string, msg: NodeMessage): Promise<Outcome> {
    const outcome = new Promise<Outcome>((resolve) => this.waiting.push(resolve));
    getNode(nodeId).receive(msg);
    return outcome;
  }

  async expectOutput(nodeId: string, msg: NodeMessage): Promise<NodeMessage> {
    const outcome = await this.send(nodeId, msg);
    assert.equal(outcome.kind, 'out', `expected an output message, got an error: ${inspect(outcome.msg['error'])}`);
    return outcome.msg;
  }

  async expectCaught(nodeId: string, msg: NodeMessage): Promise<NodeMessage> {
    const outcome = await this.send(nodeId, msg);
    assert.equal(outcome.kind, 'caught', 'expected an error at the Catch node, got an output message');
    return outcome.msg;
  }

  statuses(id: string): NodeStatus[] {
    return this.callsOf(id).status.getCalls().map((call) => call.args[0] as NodeStatus);
  }

  lastStatus(id: string): NodeStatus {
    const last = this.statuses(id).at(-1);
    assert.ok(last, `no status was set on ${id}`);
    return last;
  }

  /** The arguments of every error() and warn() call of the watched nodes. */
  errors(): unknown[] {
    return [...this.calls.values()].flatMap((c) => [...c.error.getCalls(), ...c.warn.getCalls()].flatMap((call) => call.args as unknown[]));
  }

  /** Everything that left the flow, as text. */
  texts(): string[] {
    const out: string[] = [];
    out.push(...logTexts());
    for (const msg of this.messages) out.push(JSON.stringify(msg), deepText(msg));
    for (const id of this.calls.keys()) for (const status of this.statuses(id)) out.push(JSON.stringify(status));
    for (const err of this.errors()) out.push(deepText(err));
    return out;
  }

  private callsOf(id: string): Spies {
    const calls = this.calls.get(id);
    assert.ok(calls, `node ${id} is not watched`);
    return calls;
  }
}

type Method = 'status' | 'error' | 'warn' | '_complete';

/**
 * Sees every call of a node method before it runs. (Not a sinon spy: the helper already wraps
 * these methods on the Node prototype with its own sinon, and sinon refuses to wrap them again.)
 */
export function intercept(node: RuntimeNode, method: Method, onCall: (args: unknown[]) => void): void {
  const original = node[method] as (...args: unknown[]) => void;
  Object.defineProperty(node, method, {
    configurable: true,
    writable: true,
    value: function (this: RuntimeNode, ...args: unknown[]): void {
      onCall(args);
      original.apply(this, args);
    },
  });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Texts of every entry the helper's spy saw going to the Node-RED log. */
export function logTexts(): string[] {
  return helper
    .log()
    .getCalls()
    .flatMap((call) => call.args.map(deepText));
}

/** An error, message or log entry with everything it holds: own properties, stack, cause. */
export function deepText(value: unknown): string {
  const parts = [inspect(value, { depth: Infinity, showHidden: false, maxArrayLength: 100, maxStringLength: Infinity, breakLength: Infinity })];
  if (value instanceof Error) {
    parts.push(String(value), value.stack ?? '', JSON.stringify(value));
    if (value.cause !== undefined) parts.push(deepText(value.cause));
  }
  return parts.join('\n');
}

/** The forms a password could leak in: as is, URL-encoded, inside a Basic authorization. */
export function secretForms(password: string, username = SIM_USER): string[] {
  return [password, encodeURIComponent(password), Buffer.from(`${username}:${password}`, 'utf8').toString('base64')];
}

export function assertNoSecret(texts: string[], password: string, username = SIM_USER): void {
  assert.ok(texts.length > 0, 'nothing was recorded to search');
  for (const form of secretForms(password, username)) {
    for (const text of texts) assert.ok(!text.includes(form), `a secret (${form === password ? 'the password' : 'an encoding of it'}) leaked in: ${text.slice(0, 300)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Sockets and handles

interface HandleLike {
  constructor?: { name?: string };
}

export function activeHandles(): unknown[] {
  return (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
}

/**
 * Every TCP socket opened while it runs, client and server side, seen through Node's
 * `net.client.socket` / `net.server.socket` diagnostics channels. Idle keep-alive sockets are
 * unref'd (undici does so) and do not show among `process._getActiveHandles()`; they show here.
 */
export class SocketTracker {
  private readonly clients: Array<{ socket: Socket; port?: number }> = [];
  private readonly servers: Array<{ socket: Socket; port?: number }> = [];

  private readonly onClient = (message: unknown): void => {
    const socket = socketOf(message);
    if (!socket) return;
    const entry: { socket: Socket; port?: number } = { socket };
    socket.once('connect', () => {
      entry.port = socket.remotePort;
    });
    this.clients.push(entry);
  };

  private readonly onServer = (message: unknown): void => {
    const socket = socketOf(message);
    if (socket) this.servers.push({ socket, port: socket.localPort });
  };

  constructor() {
    subscribe('net.client.socket', this.onClient);
    subscribe('net.server.socket', this.onServer);
  }

  stop(): void {
    unsubscribe('net.client.socket', this.onClient);
    unsubscribe('net.server.socket', this.onServer);
  }

  /** Client sockets that connected to `port`. */
  clientsTo(port: number): Socket[] {
    return this.clients.filter((c) => c.port === port).map((c) => c.socket);
  }

  /** Client sockets to `port` not destroyed yet (one still connecting counts: it may be for `port`). */
  openClientsTo(port: number): Socket[] {
    return this.clients.filter((c) => (c.port === port || c.port === undefined) && !c.socket.destroyed).map((c) => c.socket);
  }

  /** Sockets the server on `port` accepted. */
  acceptedOn(port: number): Socket[] {
    return this.servers.filter((c) => c.port === port).map((c) => c.socket);
  }

  /** Waits until every socket the server on `port` accepted has closed. */
  async acceptedClosed(port: number): Promise<void> {
    await Promise.all(this.acceptedOn(port).map((s) => (s.closed ? undefined : once(s, 'close'))));
  }
}

function socketOf(message: unknown): Socket | undefined {
  const socket = typeof message === 'object' && message !== null ? (message as { socket?: unknown }).socket : undefined;
  return socket instanceof Socket ? socket : undefined;
}

/** The listening server of the simulator (it runs in this process), to watch its requests. */
export function simServer(sim: Simulator): Server {
  const server = activeHandles().find((h): h is Server => {
    if (!(h instanceof Server)) return false;
    const address = h.address();
    return typeof address === 'object' && address !== null && address.port === sim.port;
  });
  assert.ok(server, 'the simulator server is not among the active handles');
  return server;
}

/** How many connections a server holds open. */
export function connectionsOf(server: Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((err, count) => (err ? reject(err) : resolve(count))));
}

/** A TCP port nobody listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

export function handleName(h: unknown): string {
  return (h as HandleLike).constructor?.name ?? typeof h;
}
