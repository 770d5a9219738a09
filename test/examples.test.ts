/**
 * The examples as a set (issue 24): they share one device node for the simulator, each keeps every
 * config node it brings in use, the gate console names the package it needs first, the README
 * lists every one; and all of them deployed into one Node-RED (as `npm start` does) hold one
 * device node per address and start without a warning.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { exampleNodes, startDemo, type Demo } from '../scripts/start';
import { freePort } from './runtime-child';
import { PROJECT_ROOT, waitFor } from './helpers';

interface FlowNode {
  id: string;
  type: string;
  z?: string;
  x?: number;
  [key: string]: unknown;
}

const SHARED_ID = 'ipcam-sim-device';
const DASHBOARD = '@flowfuse/node-red-dashboard';
/** The gate console's widgets, a package of their own. */
const WIDGETS = 'node-red-dashboard-2-ipcam';

const FILES = readdirSync(join(PROJECT_ROOT, 'examples'))
  .filter((f) => f.endsWith('.json'))
  .sort();

function example(file: string): FlowNode[] {
  return JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', file), 'utf8')) as FlowNode[];
}

/** Config nodes: neither a tab nor a node on the canvas (the editor's own rule: no x and y). */
function configNodes(nodes: FlowNode[]): FlowNode[] {
  return nodes.filter((n) => n.type !== 'tab' && n.type !== 'group' && n.x === undefined);
}

/** Ids a node names in its settings (the editor counts a config node's users this way). */
function referencedIds(node: FlowNode): string[] {
  return Object.entries(node)
    .filter(([key, value]) => key !== 'id' && key !== 'z' && key !== 'wires' && typeof value === 'string')
    .map(([, value]) => value as string);
}

describe('the examples share one simulator device and bring no unused configuration', function () {
  it('every device for the simulator (127.0.0.1:8080) is the same node, id ipcam-sim-device, named Simulator', function () {
    const copies = FILES.flatMap((file) => example(file).filter((n) => n.type === 'ipcam-device' && n['port'] === '8080').map((n) => ({ file, n })));
    assert.ok(copies.length >= 6, 'most examples talk to the simulator');
    for (const { file, n } of copies) {
      assert.equal(n.id, SHARED_ID, file);
      assert.equal(n['name'], 'Simulator', file);
      assert.deepEqual(n, copies[0]?.n, `${file}: its copy of the shared device differs`);
    }
  });

  it('the fleet example keeps three gate devices of its own, with fixed ids, each used by a node', function () {
    const fleet = example('fleet-sync.json');
    const gates = fleet.filter((n) => n.type === 'ipcam-device');
    assert.deepEqual(gates.map((g) => g['name']), ['gate-north', 'gate-south', 'gate-east']);
    assert.equal(new Set(gates.map((g) => g['port'])).size, 3);
    assert.ok(gates.every((g) => g.id !== SHARED_ID && /^[0-9a-z-]+$/.test(g.id)));
  });

  for (const file of FILES) {
    it(`${file}: every config node it brings is used by one of its nodes, and every reference resolves`, function () {
      const nodes = example(file);
      const ids = new Set(nodes.map((n) => n.id));
      const used = new Set(nodes.filter((n) => n.x !== undefined || n.type.startsWith('ui-')).flatMap(referencedIds));
      // Dashboard 2's config nodes name each other (a page its theme and base): those count too.
      for (const n of configNodes(nodes)) for (const id of referencedIds(n)) used.add(id);
      const unused = configNodes(nodes).filter((n) => !used.has(n.id)).map((n) => `${n.type} ${String(n['name'] ?? n.id)}`);
      assert.deepEqual(unused, [], `${file}: unused configuration nodes`);
      for (const n of nodes) {
        for (const key of ['device', 'server', 'group', 'page', 'ui', 'theme'] as const) {
          const ref = n[key];
          if (typeof ref === 'string' && ref !== '' && (key === 'device' || key === 'server' || n.type.startsWith('ui-'))) {
            if (key === 'group' && !n.type.startsWith('ui-')) continue;
            assert.ok(ids.has(ref), `${file}: ${n.type} ${n.id} names ${key} ${ref}, which the file does not hold`);
          }
        }
      }
    });
  }

  it('the gate console starts with a comment naming the packages it needs; the README names them too', function () {
    const first = example('gate-console.json')[0];
    assert.equal(first?.type, 'comment');
    const line = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8').split('\n').find((l) => l.startsWith('- *gate-console*'));
    for (const needed of [WIDGETS, DASHBOARD]) {
      assert.match(String(first?.['name']), new RegExp(needed));
      assert.match(String(first?.['info']), new RegExp(needed));
      assert.match(line ?? '', new RegExp(needed));
    }
    assert.match(String(first?.['info']), /Manage palette/);
  });

  it('the README lists every example, one line each', function () {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8').split('\n');
    for (const file of FILES) {
      const name = file.replace(/\.json$/, '');
      assert.equal(readme.filter((l) => l.startsWith(`- *${name}*: `)).length, 1, `README: no one-line entry for ${name}`);
    }
  });

  it("every ipcam node of the examples has a name: the Debug sidebar names a failure's node by it, not by its id", function () {
    for (const file of FILES) {
      const unnamed = example(file).filter((n) => n.type.startsWith('ipcam-') && n.x !== undefined && !(typeof n['name'] === 'string' && n['name'].trim() !== ''));
      assert.deepEqual(unnamed.map((n) => `${n.type} ${n.id}`), [], file);
    }
  });

  it('npm start deploys each shared node once', function () {
    const nodes = exampleNodes();
    assert.equal(nodes.filter((n) => n.id === SHARED_ID).length, 1);
    assert.equal(new Set(nodes.map((n) => n.id)).size, nodes.length);
  });
});

describe("the gate console's audit table reads its log as a change node does", function () {
  /** The expression of the example's "last 20 openings" change node, run as the change node runs it. */
  async function auditTable(log: string): Promise<unknown> {
    const node = example('gate-console.json').find((n) => n.type === 'change' && n['name'] === 'last 20 openings');
    const rules = node?.['rules'] as Array<{ to: string; tot: string }> | undefined;
    const rule = rules?.[0];
    assert.ok(rule && rule.tot === 'jsonata', 'the example has its "last 20 openings" JSONata rule');
    const { util } = createRequire(__filename)('@node-red/util') as {
      util: { prepareJSONataExpression(e: string, node: unknown): unknown; evaluateJSONataExpression(e: unknown, msg: object, cb: (err: unknown, value: unknown) => void): void };
    };
    const expr = util.prepareJSONataExpression(rule.to, {});
    return new Promise((resolve, reject) => util.evaluateJSONataExpression(expr, { payload: log }, (err, value) => (err ? reject(err instanceof Error ? err : new Error(JSON.stringify(err))) : resolve(value))));
  }

  /** An ISO time as the table shows it: the local date and clock, written out here without moment. */
  const localTime = (iso: string): string => {
    const d = new Date(iso);
    const two = (n: number): string => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  };
  const entry = (time: string, by: string, plate: string | null = null): string => JSON.stringify({ time, by, plate, list: plate ? 'whiteList' : null, output: 1 });

  it('skips a damaged or foreign line (a cut write, hand edits, an expression) and shows the others, newest first', async function () {
    const log = [
      entry('2025-01-01T08:00:00.000Z', 'button'),
      '{"time":"2025-01-01T08:01:00.000Z","by":"butt',
      'not json at all',
      '{"time": $now(), "by": "expression"}',
      '{"time":"2025-01-01T08:02:00.000Z","by":{"nested":1}}',
      '{}',
      '[1, 2]',
      entry('2025-01-01T08:03:00.000Z', 'plate', 'AB"12\\'),
      '',
    ].join('\n');
    // Times in the page's one form, YYYY-MM-DD HH:MM:SS of the Node-RED machine's time zone (no ISO 'T...Z', no 'UTC').
    assert.deepEqual(await auditTable(log), [
      { time: localTime('2025-01-01T08:03:00.000Z'), 'opened by': 'allow-listed plate', plate: 'AB"12\\', list: 'allow list' },
      { time: localTime('2025-01-01T08:00:00.000Z'), 'opened by': 'button', plate: null, list: null },
    ]);
  });

  it('gives a list always: none for an empty or wholly damaged log, one row for one line, the last 20 of more', async function () {
    assert.deepEqual(await auditTable(''), []);
    assert.deepEqual(await auditTable('garbage\n{'), []);
    assert.deepEqual(await auditTable(entry('t1', 'button')), [{ time: 't1', 'opened by': 'button', plate: null, list: null }]);
    const many = (await auditTable(Array.from({ length: 30 }, (_, i) => entry(`t${i}`, 'button')).join('\n'))) as Array<{ time: string }>;
    assert.deepEqual(many.map((r) => r.time), Array.from({ length: 20 }, (_, i) => `t${29 - i}`));
  });
});

describe('every example in one Node-RED (the demo of npm start)', function () {
  this.timeout(90_000);
  let demo: Demo | undefined;
  let output = '';

  before(async function () {
    // Free ports everywhere, as a second demo or a test run beside a running demo has them.
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, eventPort: 0, onOutput: (text) => (output = (output + text).slice(-256 * 1024)) });
    await demo.ready;
    await waitFor('the flows started', () => /Started flows/.test(output), 30_000);
  });

  after(async function () {
    await demo?.stop();
  });

  it('holds one device node per address, the simulator\'s with its credentials set once', async function () {
    assert.ok(demo);
    const flows = (await (await fetch(`${demo.url}/flows`)).json()) as FlowNode[];
    const devices = flows.filter((n) => n.type === 'ipcam-device');
    const addresses = devices.map((d) => `${String(d['host'])}:${String(d['port'])}`);
    assert.equal(new Set(addresses).size, addresses.length, `addresses: ${addresses.join(', ')}`);
    assert.equal(devices.length, 4);
    assert.equal(devices.find((d) => d.id === SHARED_ID)?.['port'], String(demo.simulator.port));
    // The shared device answers: the snapshot example's route gives the simulator's picture.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      const res = await fetch(`${demo.url}/snapshot`);
      await res.arrayBuffer();
      status = res.status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(status, 200);
  });

  it('moves the event servers with the demo, and every text with them: names, tab infos, the simulated posts', async function () {
    assert.ok(demo);
    const running = demo;
    const flows = (await (await fetch(`${running.url}/flows`)).json()) as FlowNode[];
    const servers = flows.filter((n) => n.type === 'ipcam-event-server');
    assert.deepEqual([...running.eventPorts.keys()], ['5002', '5003', '5004']);
    assert.deepEqual(servers.map((n) => Number(n['port'])).sort(), [...running.eventPorts.values()].sort());
    for (const server of servers) assert.equal(server['name'], `events :${String(server['port'])}`);
    const uiPort = new URL(running.url).port;
    const texts = flows.flatMap((n) => ['info', 'name', 'payload', 'url'].map((f) => n[f]).filter((t): t is string => typeof t === 'string'));
    // Nothing names a port this demo does not listen on (unless a free port happened to be it).
    for (const port of ['5002', '5003', '5004', '1880', '8080']) {
      if ([...running.eventPorts.values(), running.simulator.port, Number(uiPort)].includes(Number(port))) continue;
      const naming = texts.filter((t) => new RegExp(`(?<![\\d.])${port}(?!\\d)`).test(t));
      assert.deepEqual(naming, [], `texts still name port ${port}`);
    }
    assert.ok(texts.some((t) => t.includes(`http://127.0.0.1:${uiPort}/snapshot`)), 'the snapshot tab links this Node-RED');
    // The simulated car posts to where the gate's event server listens: the barrier opens.
    const car = flows.find((n) => n.type === 'inject' && n['name'] === 'simulate a car on the white list');
    assert.ok(car && typeof car['payload'] === 'string' && car['payload'].includes(`127.0.0.1:${running.eventPorts.get('5002')}/`), String(car?.['payload']));
    for (let i = 0; ; i++) {
      const res = await fetch(`${running.url}/inject/${car.id}`, { method: 'POST' });
      await res.arrayBuffer();
      if (res.ok) break;
      assert.ok(i < 100, `POST /inject answered ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await waitFor('the barrier relay pulsed', () => running.simulator.state.io.relayLog.length > 0, 10_000);
  });

  it('starts the flows without a warning', function () {
    const warnings = output.split('\n').filter((line) => /\[warn\]/.test(line));
    assert.deepEqual(warnings, [], output.slice(-4000));
  });
});
