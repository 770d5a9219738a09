/**
 * Shared set-up for the Node-RED node tests: a typed view of node-red-node-test-helper (it ships
 * no types), flows of a device, an action node, a Catch node and helper nodes, and a recorder of
 * everything a flow lets out (messages, status, errors, log entries) to search for secrets.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { Server, Socket, createServer } from 'node:net';
import { inspect } from 'node:util';
import sinon from 'sinon';
import type { Simulator } from '../lib/simulator';
import type { NodeAPI, NodeMessage, NodeStatus } from '../nodes/red';
import { SIM_USER } from './helpers';

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
  unload(): Promise<void>;
  getNode(id: string): RuntimeNode | null;
  startServer(): Promise<void>;
  stopServer(): Promise<void>;
  request(): { post(path: string): AdminCall };
  log(): LogSpy;
}

export const helper = module.require('node-red-node-test-helper') as TestHelper;
helper.init(require.resolve('node-red'));

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
    { ...node, z: TAB, wires: [['out']] },
    { id: 'out', type: 'helper', z: TAB, wires: [] },
    { id: 'catch', type: 'catch', z: TAB, scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: TAB, wires: [] },
  ];
}

// ---------------------------------------------------------------------------------------------
// Watching a running flow

export type Outcome = { kind: 'out'; msg: NodeMessage } | { kind: 'caught'; msg: NodeMessage };

/**
 * Records what a loaded action flow lets out: messages at `out` and `caught`, status, error and
 * warn calls of the watched nodes, and (through the helper's spy) every log entry.
 */
export class FlowWatch {
  readonly messages: NodeMessage[] = [];
  private readonly waiting: Array<(outcome: Outcome) => void> = [];
  private readonly spies = new Map<string, { status: sinon.SinonSpy; error: sinon.SinonSpy; warn: sinon.SinonSpy }>();

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
      this.spies.set(id, { status: sinon.spy(node, 'status'), error: sinon.spy(node, 'error'), warn: sinon.spy(node, 'warn') });
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
    return this.spiesOf(id).status.getCalls().map((call) => call.args[0] as NodeStatus);
  }

  lastStatus(id: string): NodeStatus {
    const last = this.statuses(id).at(-1);
    assert.ok(last, `no status was set on ${id}`);
    return last;
  }

  /** The arguments of every error() and warn() call of the watched nodes. */
  errors(): unknown[] {
    return [...this.spies.values()].flatMap((s) => [...s.error.getCalls(), ...s.warn.getCalls()].flatMap((call) => call.args as unknown[]));
  }

  /** Everything that left the flow, as text. */
  texts(): string[] {
    const out: string[] = [];
    for (const call of helper.log().getCalls()) out.push(...call.args.map(deepText));
    for (const msg of this.messages) out.push(JSON.stringify(msg), deepText(msg));
    for (const id of this.spies.keys()) for (const status of this.statuses(id)) out.push(JSON.stringify(status));
    for (const err of this.errors()) out.push(deepText(err));
    return out;
  }

  private spiesOf(id: string): { status: sinon.SinonSpy; error: sinon.SinonSpy; warn: sinon.SinonSpy } {
    const spies = this.spies.get(id);
    assert.ok(spies, `node ${id} is not watched`);
    return spies;
  }
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

/** Client sockets of this process connected to `port`. */
export function clientSocketsTo(port: number): Socket[] {
  return activeHandles().filter((h): h is Socket => h instanceof Socket && h.remotePort === port && !h.destroyed);
}

/** Sockets the server on `port` (in this process) has accepted and not yet closed. */
export function serverSocketsOf(port: number): Socket[] {
  return activeHandles().filter((h): h is Socket => h instanceof Socket && h.localPort === port && h.remotePort !== undefined && !h.destroyed);
}

/** The listening server of the simulator (in this process), to watch its requests. */
export function simServer(sim: Simulator): Server {
  const server = activeHandles().find((h): h is Server => {
    if (!(h instanceof Server)) return false;
    const address = h.address();
    return typeof address === 'object' && address !== null && address.port === sim.port;
  });
  assert.ok(server, 'the simulator server is not among the active handles');
  return server;
}

/** Waits until every socket the simulator accepted has closed (they must close once the client did). */
export async function simSocketsClosed(sim: Simulator): Promise<void> {
  await Promise.all(serverSocketsOf(sim.port).map((s) => (s.destroyed ? undefined : once(s, 'close'))));
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
