import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDemo, type Demo } from '../scripts/start';
import { PROJECT_ROOT, waitFor } from './helpers';
import { freePort } from './runtime-child';

/**
 * examples/fleet-sync.json as `npm start` runs it (a real Node-RED child, three simulators for
 * its three gates): "plan" changes nothing; "apply" makes each gate hold exactly the CSV list.
 */

interface ExampleNode {
  id: string;
  type: string;
  name?: string;
  template?: string;
}

const EXAMPLE = JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', 'fleet-sync.json'), 'utf8')) as ExampleNode[];

function injectNamed(name: string): string {
  const node = EXAMPLE.find((n) => n.type === 'inject' && n.name === name);
  assert.ok(node, `the example has no inject "${name}"`);
  return node.id;
}

/** The plate numbers of the example's CSV list. */
function csvPlates(): string[] {
  const template = EXAMPLE.find((n) => n.type === 'template')?.template ?? '';
  return template
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0]?.trim() ?? '')
    .filter((plate) => plate !== '')
    .sort();
}

describe('examples/fleet-sync.json in the demo: one CSV allow list to three simulated gates', function () {
  this.timeout(90_000);
  let demo: Demo | undefined;

  before(async function () {
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, eventPort: 0, quiet: true });
    await demo.ready;
  });

  after(async function () {
    await demo?.stop();
  });

  function theDemo(): Demo {
    assert.ok(demo, 'the demo is not running');
    return demo;
  }

  /** Presses an inject button as the editor does (POST /inject/:id); retried while the flows start. */
  async function press(name: string): Promise<void> {
    const id = injectNamed(name);
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${theDemo().url}/inject/${id}`, { method: 'POST' });
      await res.arrayBuffer();
      if (res.ok) return;
      if (attempt > 100) assert.fail(`POST /inject/${id} answered ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  function gatePlates(): string[][] {
    return theDemo().fleet.map((sim) =>
      sim.state.plates
        .inGroup('1')
        .map((p) => p.plate)
        .sort(),
    );
  }

  it('runs three gate simulators besides the main one, each device of the example on its own', function () {
    assert.equal(theDemo().fleet.length, 3);
    assert.equal(new Set([theDemo().simulator.port, ...theDemo().fleet.map((s) => s.port)]).size, 4);
    // Four devices to an inventory keyed by MAC, the main one's MAC as ever; each gate named as its node.
    const devices = [theDemo().simulator, ...theDemo().fleet].map((sim) => sim.state.device);
    assert.deepEqual(devices.map((d) => d.mac), ['58:5b:69:00:00:01', '58:5b:69:00:00:02', '58:5b:69:00:00:03', '58:5b:69:00:00:04']);
    assert.equal(new Set(devices.map((d) => d.sn)).size, 4);
    assert.deepEqual(devices.slice(1).map((d) => d.deviceName).sort(), ['gate-east', 'gate-north', 'gate-south']);
  });

  it('plan reads every gate and changes nothing; apply puts the CSV list on every gate', async function () {
    const wanted = csvPlates();
    assert.ok(wanted.length >= 3, 'the example CSV holds a few plates');
    theDemo().fleet[1]?.state.plates.add('STALE1', '1');

    await press('plan');
    await waitFor('every gate read', () => theDemo().fleet.length > 0 && theDemo().fleet.every((sim) => sim.state.requests.some((r) => r.path === '/GetLicensePlates')), 30_000);
    assert.deepEqual(gatePlates(), [[], ['STALE1'], []]);
    assert.ok(theDemo().simulator.state.requests.every((r) => r.path !== '/GetLicensePlates'), 'the main simulator was addressed');

    await press('apply');
    // Details (owner, dates) follow each addition: the last plate's details mark the end.
    const visitors = () => theDemo().fleet.map((sim) => sim.state.plates.get('KL456', '1'));
    await waitFor('every gate in step', () => visitors().length > 0 && visitors().every((v) => v?.end === '2027-06-30 23:59:59'), 30_000);
    assert.deepEqual(gatePlates(), [wanted, wanted, wanted]);
    for (const visitor of visitors()) assert.equal(visitor?.owner, 'Visitor');
  });
});
