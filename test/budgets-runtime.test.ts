/**
 * Issue 18 in a real Node-RED runtime with a 512 MB heap (a Raspberry Pi class budget): one
 * message to a plate query, a plate sync or an edge walk against the hostile devices of item 2
 * ends with an error at the Catch node and the runtime stays up; a 4-million-element answer
 * through `ipcam-request` and through "Test connection" blocks its event loop under 250 ms.
 */
import { strict as assert } from 'node:assert';
import { MAX_RECORD_FIELD_BYTES } from '../lib/safety/budgets';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHostileDevice, type HostileDevice } from './hostile-device';
import { ChildRuntime, type FlowNode } from './runtime-child';

const TAB = 'budgets-tab';
const DEVICE = 'budgets-device';
/** The event-loop block the issue allows for one hostile answer (a contract, not a timing of ours). */
const MAX_BLOCK_MS = 250;

/** One path per node under test: `POST /budgets/<name>` runs it with the JSON body as msg.payload and answers its result or its error. */
function budgetFlow(port: number): FlowNode[] {
  const under: Array<{ name: string; node: { type: string; [key: string]: unknown } }> = [
    { name: 'query', node: { type: 'ipcam-plate-query', device: DEVICE, group: '1' } },
    { name: 'sync', node: { type: 'ipcam-plate-sync', device: DEVICE, group: '1', dryRun: true } },
    { name: 'edge', node: { type: 'ipcam-edgerecord', device: DEVICE, operation: 'search', params: {} } },
    { name: 'info', node: { type: 'ipcam-request', device: DEVICE, operation: 'getDeviceInfo', params: {} } },
  ];
  const nodes: FlowNode[] = [
    { id: TAB, type: 'tab', label: 'budgets' },
    {
      id: DEVICE,
      type: 'ipcam-device',
      name: 'hostile',
      host: '127.0.0.1',
      port: String(port),
      protocol: 'http',
      auth: 'auto',
      tlsVerify: true,
      timeout: '30000',
      credentials: { username: 'admin', password: 'not-used' },
    },
    { id: 'budgets-catch', type: 'catch', z: TAB, scope: null, uncaught: false, wires: [['budgets-error']] },
    { id: 'budgets-error', type: 'change', z: TAB, rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'error', tot: 'msg' }], wires: [['budgets-failed']] },
    { id: 'budgets-failed', type: 'http response', z: TAB, statusCode: '500', headers: {} },
    { id: 'budgets-done', type: 'http response', z: TAB, statusCode: '200', headers: {} },
    // Answers once the flow runs: the tests wait for it after the deploy.
    { id: 'budgets-in-ready', type: 'http in', z: TAB, url: '/budgets/ready', method: 'post', upload: false, wires: [['budgets-done']] },
  ];
  for (const { name, node } of under) {
    nodes.push(
      { id: `budgets-in-${name}`, type: 'http in', z: TAB, url: `/budgets/${name}`, method: 'post', upload: false, wires: [[`budgets-${name}`]] },
      { ...node, id: `budgets-${name}`, z: TAB, wires: [['budgets-done']] },
    );
  }
  return nodes;
}

async function waitFor(what: string, check: () => Promise<boolean>, limitMs = 15_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

describe('budgets in a real Node-RED runtime with a 512 MB heap', function () {
  this.timeout(5 * 60_000);
  let device: HostileDevice;
  let runtime: ChildRuntime;

  before(async function () {
    device = await startHostileDevice();
    runtime = new ChildRuntime({ nodeArgs: ['--max-old-space-size=512'], watchLoopDelay: true });
    await runtime.start();
    await runtime.deploy(budgetFlow(device.port));
    await waitFor('the flow to run', async () => (await fetch(`${runtime.adminUrl}/budgets/ready`, { method: 'POST' })).status === 200);
  });

  after(async function () {
    await runtime?.stop();
    await device?.close();
  });

  async function run(name: string, payload: unknown): Promise<Outcome> {
    const res = await fetch(`${runtime.adminUrl}/budgets/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) }).catch((err: unknown) => {
      assert.fail(`the runtime did not answer (${String(err)}); it ${runtime.alive ? 'runs' : 'exited'}:\n${runtime.output.slice(-4000)}`);
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  }

  /** The runtime still runs and its admin API answers. */
  async function assertUp(): Promise<void> {
    assert.ok(runtime.alive, `the runtime exited:\n${runtime.output.slice(-4000)}`);
    const flows = await fetch(`${runtime.adminUrl}/flows`, { headers: { 'node-red-api-version': 'v2' } });
    assert.equal(flows.status, 200);
    assert.ok(runtime.alive);
    assert.doesNotMatch(runtime.output, /heap out of memory|Uncaught Exception|Unhandled rejection/i, runtime.output.slice(-4000));
  }

  function assertError(outcome: Outcome, code: string, message: RegExp): void {
    assert.equal(outcome.status, 500, JSON.stringify(outcome.body).slice(0, 500));
    assert.equal(outcome.body['code'], code, JSON.stringify(outcome.body));
    assert.match(String(outcome.body['message']), message);
  }

  it('a plate query against pages of 100 plates with 100 KB fields: EPARSE at the field budget, the runtime up', async function () {
    device.settings = { ...device.settings, platesPerPage: 100, plateFieldBytes: 16, ownerBytes: 100 * 1024 };
    assertError(await run('query', {}), 'EPARSE', /the field budget/);
    await assertUp();
  });

  it('a plate sync against pages of fields just under the field budget, forever: EDEVICE at the walk budget, the runtime up', async function () {
    device.settings = { ...device.settings, platesPerPage: 100, plateFieldBytes: MAX_RECORD_FIELD_BYTES - 24, ownerBytes: undefined };
    device.reset();
    assertError(await run('sync', []), 'EDEVICE', /the walk budget/);
    assert.deepEqual([...device.requests.keys()], ['/GetLicensePlates']);
    await assertUp();
  });

  it('an edge walk against pages of 400 records when 99 were asked: EDEVICE at the walk budget, the runtime up', async function () {
    device.settings = { ...device.settings, recordsPerPage: 400, recordFieldBytes: 200, recordCount: '99999' };
    assertError(await run('edge', { all: true }), 'EDEVICE', /edge record walk stopped: .*the walk budget/);
    const probe = await runtime.probe();
    console.log(`      after the three walks: heap ${(probe.heapUsed / 1048576).toFixed(0)} MB used after GC, RSS ${(probe.rss / 1048576).toFixed(0)} MB`);
    await assertUp();
  });

  it(`a 4-million-element answer through ipcam-request: EPARSE at the element budget, the event loop blocked under ${MAX_BLOCK_MS} ms`, async function () {
    device.settings = { ...device.settings, infoElements: 4_000_000 };
    await runtime.loopDelay();
    const outcome = await run('info', {});
    const blocked = await runtime.loopDelay();
    console.log(`      event loop blocked at most ${blocked.toFixed(0)} ms`);
    assertError(outcome, 'EPARSE', /XML elements \(the element budget/);
    assert.ok(blocked < MAX_BLOCK_MS, `the event loop was blocked ${blocked} ms`);
    await assertUp();
  });

  it(`a 4-million-element answer through "Test connection": an error answer, the event loop blocked under ${MAX_BLOCK_MS} ms`, async function () {
    device.settings = { ...device.settings, infoElements: 4_000_000 };
    await runtime.loopDelay();
    const res = await fetch(`${runtime.adminUrl}/ipcam-device/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ host: '127.0.0.1', port: String(device.port), protocol: 'http', auth: 'auto', tlsVerify: true, timeout: '30000', username: 'admin', password: 'typed' }),
    });
    const answer = (await res.json()) as { ok: boolean; error?: { code: string } };
    const blocked = await runtime.loopDelay();
    console.log(`      event loop blocked at most ${blocked.toFixed(0)} ms; the test answered ${JSON.stringify(answer)}`);
    assert.equal(res.status, 200);
    // The XML answer is refused at its element budget; the CGI identification that follows finds nothing (404).
    assert.equal(answer.ok, false);
    assert.ok(blocked < MAX_BLOCK_MS, `the event loop was blocked ${blocked} ms`);
    await assertUp();
  });
});
