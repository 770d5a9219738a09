/**
 * Lens, climate and defog (spec 4.13, 4.14) from the operation table: the exact request of each,
 * the parsed answer against the simulator over real sockets, bad input as EINPUT with nothing
 * sent, and an error line in a 200 answer as EDEVICE.
 */
import { strict as assert } from 'node:assert';
import { runOperation } from '../lib/ops';
import type { Simulator } from '../lib/simulator';
import type { DeviceClient } from '../lib/transport/client';
import { expectRejection } from './helpers';
import { requestOp as op, requestTarget as target } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

describe('operations: lens, climate, defog', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  describe('requests as the spec writes them', function () {
    const cases: Array<[string, unknown, string]> = [
      ['lens', { mode: 'zoom', step: 10 }, '/cgi-bin/admin/refocus?mode=zoom&value=10'],
      ['lens', { mode: 'focus', step: '-80' }, '/cgi-bin/admin/refocus?mode=focus&value=-80'],
      ['lens', { mode: 'zoom', position: 100 }, '/cgi-bin/admin/refocus?mode=zoom&Position=100'],
      ['lens', { mode: 'smart' }, '/cgi-bin/admin/refocus?mode=smart&method=fast'],
      ['lens', { mode: 'smart', method: 'full' }, '/cgi-bin/admin/refocus?mode=smart&method=full'],
      ['readClimate', {}, '/cgi-bin/admin/equip'],
      ['readClimate', undefined, '/cgi-bin/admin/equip'],
      ['setDefog', { on: true }, '/cgi-bin/admin/equip?defog=on'],
      ['setDefog', { on: 'false' }, '/cgi-bin/admin/equip?defog=off'],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name} ${JSON.stringify(input)} -> ${expected}`, function () {
        assert.equal(target(name, input), expected);
      });
    }
  });

  describe('against the simulator', function () {
    it('lens moves zoom and focus by a step or to a position; smart focus runs', async function () {
      await runOperation(client, op('lens'), { mode: 'zoom', position: 30 });
      assert.equal(sim.state.equipment.zoom, 30);
      const result = await runOperation(client, op('lens'), { mode: 'zoom', step: 10 });
      assert.deepEqual(result.payload, { ok: true });
      assert.equal(sim.state.equipment.zoom, 40);
      await runOperation(client, op('lens'), { mode: 'smart', method: 'full' });
      assert.deepEqual(sim.state.equipment.smartRuns, ['full']);
    });

    it('readClimate gives typed numbers and words', async function () {
      sim.state.equipment.temperatureC = 20;
      const { payload } = await runOperation(client, op('readClimate'), {});
      assert.deepEqual(payload, { temperatureC: 20, temperatureF: 68, fan: 'on', heater: 'off' });
    });

    it('setDefog switches defog', async function () {
      await runOperation(client, op('setDefog'), { on: true });
      assert.equal(sim.state.equipment.defog, true);
      await runOperation(client, op('setDefog'), { on: false });
      assert.equal(sim.state.equipment.defog, false);
    });

    it('an error line in a 200 answer is EDEVICE', async function () {
      // A request the simulator refuses with an error line, sent past our checks on purpose.
      await expectRejection(
        (async () => {
          const answer = await (await import('../lib/ops')).contextFor(client).cgi({ path: '/cgi-bin/admin/equip', query: { defog: 'maybe' }, what: 'defog' });
          return answer;
        })(),
        'EDEVICE',
        /defog/,
      );
    });
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const cases: Array<[string, unknown]> = [
      ['lens', {}],
      ['lens', { mode: 'tilt', step: 1 }],
      ['lens', { mode: 'zoom' }],
      ['lens', { mode: 'zoom', step: 81 }],
      ['lens', { mode: 'zoom', step: -81 }],
      ['lens', { mode: 'zoom', step: 1.5 }],
      ['lens', { mode: 'zoom', step: '1e1' }],
      ['lens', { mode: 'focus', position: 101 }],
      ['lens', { mode: 'focus', position: 10, step: 1 }],
      ['lens', { mode: 'smart', step: 1 }],
      ['lens', { mode: 'smart', method: 'slow' }],
      ['lens', { mode: 'zoom', method: 'fast', step: 1 }],
      ['lens', { mode: 'zoom', step: 1, speed: 3 }],
      ['readClimate', { verbose: true }],
      ['setDefog', {}],
      ['setDefog', { on: 'yes' }],
      ['setDefog', { on: 1 }],
    ];
    for (const [name, input] of cases) {
      it(`${name} ${JSON.stringify(input)}`, async function () {
        await expectRejection(runOperation(client, op(name), input), 'EINPUT');
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
