/**
 * Device parameters (spec 4.2) from the operation table: the exact request of each entry
 * (repeated `group=` keys), the parsed answer against the simulator over real sockets, bad input
 * as EINPUT with nothing sent, error lines in 200 answers as EDEVICE, and the destructive guard.
 * The library functions of lib/ops/param-calls.ts run the same entries.
 */
import { strict as assert } from 'node:assert';
import { addParamGroup as addGroupFn, listParams as listFn, removeParamGroup as removeGroupFn, updateParams as updateFn } from '../lib/ops/param-calls';
import { chooseOperation, REQUEST_OPERATIONS, runOperation } from '../lib/ops';
import type { Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD } from './helpers';
import { RawDevice } from './raw-device';
import { requestOp as op, requestTarget as target } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

/**
 * The figures docs/operations.md gives, written here and not taken from lib/ops (the simulator
 * enforces the same constants: a wrong number there would pass every other test).
 */
const DOCUMENTED = { nameMax: 128, valueMax: 1024, namesMax: 64 } as const;

describe('operations: parameters', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  it('the four entries are in the table with their access level and destructive flag', function () {
    assert.deepEqual(
      ['listParams', 'updateParams', 'addParamGroup', 'removeParamGroup'].map((n) => [n, op(n).api, op(n).access, op(n).destructive]),
      [
        ['listParams', 'cgi', 'view', false],
        ['updateParams', 'cgi', 'operator', false],
        ['addParamGroup', 'cgi', 'operator', false],
        ['removeParamGroup', 'cgi', 'operator', true],
      ],
    );
  });

  describe('requests as the spec and the field notes write them', function () {
    const cases: Array<[string, unknown, string]> = [
      ['listParams', {}, '/cgi-bin/admin/param?action=list'],
      ['listParams', undefined, '/cgi-bin/admin/param?action=list'],
      ['listParams', { group: [] }, '/cgi-bin/admin/param?action=list'],
      ['listParams', { group: 'Network' }, '/cgi-bin/admin/param?action=list&group=Network'],
      // Field notes: several groups are repeated `group=` keys, not one comma list.
      ['listParams', { group: ['General.Time', 'Image.OSD'] }, '/cgi-bin/admin/param?action=list&group=General.Time&group=Image.OSD'],
      ['listParams', { group: 'General.Time, Image.OSD' }, '/cgi-bin/admin/param?action=list&group=General.Time&group=Image.OSD'],
      ['listParams', { group: 'Image.I*.Appearance', level: 'view' }, '/cgi-bin/view/param?action=list&group=Image.I*.Appearance'],
      ['listParams', { group: 'Brand', level: 'operator' }, '/cgi-bin/operator/param?action=list&group=Brand'],
      [
        'updateParams',
        { params: { 'Image.I0.Text.String': 'a&b=c/d e+f\\g', 'Motion.M0.Sensitivity': 85, 'Image.I0.Text.Enabled': true } },
        '/cgi-bin/admin/param?action=update&Image.I0.Text.String=a%26b%3Dc%2Fd%20e%2Bf%5Cg&Motion.M0.Sensitivity=85&Image.I0.Text.Enabled=true',
      ],
      ['updateParams', { params: { 'General.Time.TimeZone': 'GMT-06:00/America/Mexico_City' }, level: 'operator' }, '/cgi-bin/operator/param?action=update&General.Time.TimeZone=GMT-06%3A00%2FAmerica%2FMexico_City'],
      ['updateParams', { params: { 'root.Image.I0.Text.String': '' } }, '/cgi-bin/admin/param?action=update&root.Image.I0.Text.String='],
      ['addParamGroup', { group: 'Motion', template: 'motion' }, '/cgi-bin/admin/param?action=add&group=Motion&template=motion'],
      ['addParamGroup', { group: 'Event', template: 'event', level: 'operator' }, '/cgi-bin/operator/param?action=add&group=Event&template=event'],
      ['removeParamGroup', { group: 'Motion.M1' }, '/cgi-bin/admin/param?action=remove&group=Motion.M1'],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name} ${JSON.stringify(input)} -> ${expected}`, function () {
        assert.equal(target(name, input), expected);
      });
    }
  });

  describe('against the simulator', function () {
    it('listParams with several groups sends repeated keys and gives every parameter without root.', async function () {
      const { payload } = await runOperation(client, op('listParams'), { group: ['Motion', 'Brand.ProdNbr'] });
      assert.equal(sim.state.requests.at(-1)?.rawQuery, 'action=list&group=Motion&group=Brand.ProdNbr');
      assert.deepEqual(payload, {
        'Motion.M0.Name': 'Door',
        'Motion.M0.Sensitivity': '80',
        'Motion.M0.Threshold': '40',
        'Motion.M1.Name': 'Gate',
        'Motion.M1.Sensitivity': '70',
        'Motion.M1.Threshold': '50',
        'Brand.ProdNbr': sim.state.device.deviceName,
      });
    });

    it('listParams without a group gives all; with a wildcard the matching ones; under view too', async function () {
      const all = (await runOperation(client, op('listParams'), {})).payload as Record<string, string>;
      assert.equal(Object.keys(all).length, sim.state.params.size);
      assert.ok(Object.keys(all).every((k) => !k.startsWith('root.')));
      const io = await runOperation(client, op('listParams'), { group: 'IOPort.I*.Input', level: 'view' });
      assert.deepEqual(io.payload, { 'IOPort.I0.Input.Name': 'Input 1', 'IOPort.I1.Input.Name': 'Input 2' });
    });

    it('listParams of an unknown group gives {}', async function () {
      const { payload } = await runOperation(client, op('listParams'), { group: 'NoSuchGroup' });
      assert.deepEqual(payload, {});
    });

    it('listParams keeps values with / and : and = as text', async function () {
      sim.state.params.set('General.Time.TimeZone', 'GMT-06:00/America/Mexico_City');
      sim.state.params.set('Image.I0.Text.String', 'a=b');
      const { payload } = await runOperation(client, op('listParams'), { group: ['General.Time', 'Image.I0.Text'] });
      assert.deepEqual(payload, { 'General.Time.TimeZone': 'GMT-06:00/America/Mexico_City', 'Image.I0.Text.String': 'a=b' });
    });

    it('listParams trims the spaces some firmware writes around names, = and values (field notes)', async function () {
      sim.state.params.set('Network.Bonjour.FriendlyName', 'Main Entrance');
      sim.state.params.set('Image.I0.Text.String', 'a = b');
      sim.setAnswer({ spacedParams: true });
      try {
        const raw = await client.request({ path: '/cgi-bin/admin/param?action=list&group=Network.Bonjour' });
        assert.equal(raw.body.toString(), ' root.Network.Bonjour.FriendlyName = Main Entrance \r\n', 'the simulator writes the spaces');
        const { payload } = await runOperation(client, op('listParams'), { group: ['Network.Bonjour', 'Image.I0.Text'] });
        assert.deepEqual(payload, { 'Network.Bonjour.FriendlyName': 'Main Entrance', 'Image.I0.Text.String': 'a = b' });
      } finally {
        sim.setAnswer({ spacedParams: false });
      }
    });

    it('updateParams assigns the values and names them', async function () {
      const { payload } = await runOperation(client, op('updateParams'), { params: { 'Image.I0.Text.String': 'Tor Nord & Süd', 'Motion.M0.Sensitivity': 85 } });
      assert.deepEqual(payload, { ok: true, updated: ['Image.I0.Text.String', 'Motion.M0.Sensitivity'] });
      assert.equal(sim.state.params.get('Image.I0.Text.String'), 'Tor Nord & Süd');
      assert.equal(sim.state.params.get('Motion.M0.Sensitivity'), '85');
    });

    it('updateParams answered "# Error: ..." with HTTP 200 is EDEVICE, and nothing changed', async function () {
      const before = sim.state.params.get('Image.I0.Text.String');
      const err = await expectRejection(runOperation(client, op('updateParams'), { params: { 'Image.I0.Text.String': 'x', 'Image.I0.NoSuch': 'y' } }), 'EDEVICE', /parameter update.*error setting 'Image\.I0\.NoSuch'/);
      assert.equal(err.status, 200);
      assert.equal(sim.state.params.get('Image.I0.Text.String'), before);
    });

    it('updateParams under the view level is EINPUT before anything is sent (spec: changes need operator or admin)', async function () {
      await expectRejection(runOperation(client, op('updateParams'), { params: { 'Image.I0.Text.String': 'x' }, level: 'view' }), 'EINPUT', /level/);
      assert.equal(sim.state.requestCount, 0);
    });

    it('addParamGroup gives the group the device created, with its template values; removeParamGroup takes it away', async function () {
      const first = await runOperation(client, op('addParamGroup'), { group: 'Motion', template: 'motion' });
      assert.deepEqual(first.payload, { ok: true, group: 'Motion.M2' });
      assert.equal(sim.state.params.get('Motion.M2.Sensitivity'), '90');
      const listed = (await runOperation(client, op('listParams'), { group: 'Motion.M2' })).payload as Record<string, string>;
      assert.equal(listed['Motion.M2.WindowType'], 'include');
      const event = await runOperation(client, op('addParamGroup'), { group: 'Event', template: 'event', level: 'operator' });
      assert.deepEqual(event.payload, { ok: true, group: 'Event.E0' });

      const removed = await runOperation(client, op('removeParamGroup'), { group: 'Motion.M2' });
      assert.deepEqual(removed.payload, { ok: true });
      assert.deepEqual((await runOperation(client, op('listParams'), { group: 'Motion.M2' })).payload, {});
      await runOperation(client, op('removeParamGroup'), { group: 'Event.E0' });
    });

    it('addParamGroup takes the lowest free node; the device full or an unknown template is EDEVICE', async function () {
      await runOperation(client, op('removeParamGroup'), { group: 'Motion.M0' });
      assert.deepEqual((await runOperation(client, op('addParamGroup'), { group: 'Motion', template: 'motion' })).payload, { ok: true, group: 'Motion.M0' });
      await expectRejection(runOperation(client, op('addParamGroup'), { group: 'Motion', template: 'nosuch' }), 'EDEVICE', /error adding 'nosuch'/);
      await expectRejection(runOperation(client, op('addParamGroup'), { group: 'Brand', template: 'motion' }), 'EDEVICE', /error adding 'Brand'/);
      const added: string[] = [];
      for (let i = 0; i < 5; i++) added.push(((await runOperation(client, op('addParamGroup'), { group: 'Recipient', template: 'recipient' })).payload as { group: string }).group);
      assert.deepEqual(added, ['Recipient.R0', 'Recipient.R1', 'Recipient.R2', 'Recipient.R3', 'Recipient.R4']);
      // The simulator keeps 5 recipients at most (a bounded tree): the 6th is refused with an error line.
      await expectRejection(runOperation(client, op('addParamGroup'), { group: 'Recipient', template: 'recipient' }), 'EDEVICE', /error adding 'Recipient'/);
    });

    it('removeParamGroup of a fixed or unknown group is EDEVICE and removes nothing', async function () {
      const size = sim.state.params.size;
      await expectRejection(runOperation(client, op('removeParamGroup'), { group: 'Brand' }), 'EDEVICE', /error removing 'Brand'/);
      await expectRejection(runOperation(client, op('removeParamGroup'), { group: 'Motion.M9' }), 'EDEVICE', /error removing 'Motion\.M9'/);
      assert.equal(sim.state.params.size, size);
    });

    it('an answer that only names a node without the group, or says only OK, still reads', async function () {
      const { createdGroup } = await import('../lib/ops/parameters');
      assert.equal(createdGroup('M3 OK\r\n', 'Motion'), 'Motion.M3');
      assert.equal(createdGroup('Motion.M3 OK', 'Motion'), 'Motion.M3');
      assert.equal(createdGroup('OK\r\n', 'Motion'), undefined);
      assert.equal(createdGroup('x'.repeat(10_000) + ' OK', 'Motion'), undefined);
    });

    it('the library functions run the same entries (repeated keys, typed results, same checks)', async function () {
      assert.deepEqual(await listFn(client, ['Brand.ProdNbr', 'Network.HostName']), { 'Brand.ProdNbr': sim.state.device.deviceName, 'Network.HostName': 'ipcam-sim' });
      assert.equal(sim.state.requests.at(-1)?.rawQuery, 'action=list&group=Brand.ProdNbr&group=Network.HostName');
      assert.deepEqual(await updateFn(client, { 'Network.HostName': 'gate-cam' }, { level: 'operator' }), { ok: true, updated: ['Network.HostName'] });
      assert.equal(sim.state.requests.at(-1)?.path, '/cgi-bin/operator/param');
      const added = await addGroupFn(client, 'Event', 'event');
      assert.deepEqual(added, { ok: true, group: 'Event.E0' });
      assert.deepEqual(await removeGroupFn(client, 'Event.E0'), { ok: true });
      const count = sim.state.requestCount;
      await expectRejection(updateFn(client, { 'Network.HostName': 'a\r\nroot.Brand.Brand=x' }), 'EINPUT');
      await expectRejection(removeGroupFn(client, 'Motion.*'), 'EINPUT');
      assert.equal(sim.state.requestCount, count);
    });

    it('the device password appears in no result or error of these operations', async function () {
      const texts: string[] = [];
      texts.push(JSON.stringify((await runOperation(client, op('listParams'), {})).payload));
      for (const input of [{ params: { 'Image.I0.NoSuch': SIM_PASSWORD } }, { params: { [`Image.${'x'.repeat(10)}`]: 'y' } }]) {
        const err = await expectRejection(runOperation(client, op('updateParams'), input), 'EDEVICE');
        texts.push(err.message, JSON.stringify(err));
      }
      for (const text of texts) assert.ok(!text.includes(SIM_PASSWORD) && !text.includes('S3cr3t'), text.slice(0, 200));
    });
  });

  describe('a raw device writing spaces around names, = and values (field notes)', function () {
    it('listParams gives the names and values trimmed, spaces inside a value kept, an empty value empty', async function () {
      const body = [' root.Network.Bonjour.FriendlyName = Main Entrance ', 'root.Group.Name = yes ', '\troot.Image.I0.Text.String =\ta = b\t', 'root.Image.I0.Text.Empty = ', ' = orphan', ''].join('\r\n');
      const device = new RawDevice((socket) => {
        socket.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      });
      const raw = new DeviceClient({ host: '127.0.0.1', port: await device.listen(), username: 'u', password: 'p', auth: 'basic', timeout: 5000 });
      try {
        const { payload } = await runOperation(raw, op('listParams'), { group: ['Network', 'Group', 'Image'] });
        assert.deepEqual(payload, { 'Network.Bonjour.FriendlyName': 'Main Entrance', 'Group.Name': 'yes', 'Image.I0.Text.String': 'a = b', 'Image.I0.Text.Empty': '' });
        assert.equal(device.requests.length, 1);
      } finally {
        await raw.close();
        await device.close();
      }
    });
  });

  describe('the destructive guard', function () {
    it('removeParamGroup chosen by msg is refused with nothing sent; set in the node it runs', async function () {
      const size = sim.state.params.size;
      await expectRejection(
        (async () => {
          const chosen = chooseOperation(REQUEST_OPERATIONS, 'msg', 'removeParamGroup');
          return runOperation(client, chosen, { group: 'Motion.M1' });
        })(),
        'EINPUT',
        /removeParamGroup/,
      );
      assert.equal(sim.state.requestCount, 0);
      assert.equal(sim.state.params.size, size);
      const chosen = chooseOperation(REQUEST_OPERATIONS, 'removeParamGroup', undefined);
      await runOperation(client, chosen, { group: 'Motion.M1' });
      assert.equal(sim.state.params.get('Motion.M1.Name'), undefined);
    });

    it('listParams (read) may be chosen by msg; updateParams and addParamGroup (change) only by the node', function () {
      assert.equal(chooseOperation(REQUEST_OPERATIONS, 'msg', 'listParams').name, 'listParams');
      for (const name of ['updateParams', 'addParamGroup']) {
        assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', name), (err: Error & { code?: string }) => err.code === 'EINPUT' && /class change/.test(err.message), name);
        assert.equal(chooseOperation(REQUEST_OPERATIONS, name, undefined).name, name);
      }
    });
  });

  it('the documented limits are the limits: names of 128 characters, values of 1024, 64 names a request', function () {
    const name = (length: number, i = 0): string => `N${i}`.padEnd(length, 'a');
    const updates = (count: number, nameLength = 8, value = 'x'): Record<string, string> => Object.fromEntries(Array.from({ length: count }, (_, i) => [name(nameLength, i), value]));
    // At the limit: taken (checked only, nothing sent).
    op('updateParams').params.parse({ params: updates(DOCUMENTED.namesMax, DOCUMENTED.nameMax, 'v'.repeat(DOCUMENTED.valueMax)) }, 'payload');
    op('listParams').params.parse({ group: Array.from({ length: DOCUMENTED.namesMax }, (_, i) => name(DOCUMENTED.nameMax, i)) }, 'payload');
    op('addParamGroup').params.parse({ group: name(DOCUMENTED.nameMax), template: 'motion' }, 'payload');
    op('removeParamGroup').params.parse({ group: name(DOCUMENTED.nameMax) }, 'payload');
    // One more: EINPUT.
    for (const [opName, input] of [
      ['updateParams', { params: updates(1, DOCUMENTED.nameMax + 1) }],
      ['updateParams', { params: updates(1, 8, 'v'.repeat(DOCUMENTED.valueMax + 1)) }],
      ['updateParams', { params: updates(DOCUMENTED.namesMax + 1) }],
      ['listParams', { group: [name(DOCUMENTED.nameMax + 1)] }],
      ['listParams', { group: Array.from({ length: DOCUMENTED.namesMax + 1 }, (_, i) => name(8, i)) }],
      ['removeParamGroup', { group: name(DOCUMENTED.nameMax + 1) }],
    ] as const) {
      assert.throws(() => op(opName).params.parse(input, 'payload'), { code: 'EINPUT' }, `${opName} ${JSON.stringify(input).slice(0, 80)}`);
    }
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const long = 'A'.repeat(DOCUMENTED.nameMax + 1);
    const many = Object.fromEntries(Array.from({ length: DOCUMENTED.namesMax + 1 }, (_, i) => [`Image.I0.P${i}`, 'x']));
    const cases: Array<[string, unknown]> = [
      ['listParams', { group: 'Network&action=update' }],
      ['listParams', { group: ['Brand\n'] }],
      ['listParams', { group: [long] }],
      ['listParams', { group: 'x'.repeat(10_000_000) }],
      ['listParams', { group: Array.from({ length: DOCUMENTED.namesMax + 1 }, (_, i) => `G${i}`) }],
      ['listParams', { group: 'Brand,,Network' }],
      ['listParams', { group: true }],
      ['listParams', { group: {} }],
      ['listParams', { level: 'root' }],
      ['listParams', { groups: ['Brand'] }],
      ['updateParams', {}],
      ['updateParams', { params: {} }],
      ['updateParams', { params: 'Image.I0.Text.String=x' }],
      ['updateParams', { params: ['x'] }],
      ['updateParams', { params: { 'Image.I0.Text.String&action=remove': 'x' } }],
      ['updateParams', { params: { 'Image.I0.*': 'x' } }],
      ['updateParams', { params: { 'Image.I0.Text.String': 'a\r\nroot.Brand.Brand=x' } }],
      ['updateParams', { params: { 'Image.I0.Text.String': 'x'.repeat(DOCUMENTED.valueMax + 1) } }],
      ['updateParams', { params: { 'Image.I0.Text.String': 'x'.repeat(10_000_000) } }],
      ['updateParams', { params: { 'Image.I0.Text.String': Infinity } }],
      ['updateParams', { params: { 'Image.I0.Text.String': NaN } }],
      ['updateParams', { params: { 'Image.I0.Text.String': { a: 1 } } }],
      ['updateParams', { params: { 'Image.I0.Text.String': null } }],
      ['updateParams', { params: { 'Image.I0.Text.String': '\ud800' } }],
      ['updateParams', { params: many }],
      ['updateParams', { params: { 'Image.I0.Text.String': 'x' }, level: 'view' }],
      ['addParamGroup', { group: 'Motion' }],
      ['addParamGroup', { template: 'motion' }],
      ['addParamGroup', { group: 'Motion', template: 'mo tion' }],
      ['addParamGroup', { group: 'Motion/..', template: 'motion' }],
      ['addParamGroup', { group: 'Motion', template: 'motion', level: 'view' }],
      ['removeParamGroup', {}],
      ['removeParamGroup', { group: '' }],
      ['removeParamGroup', { group: 'Motion.*' }],
      ['removeParamGroup', { group: '*' }],
      ['removeParamGroup', { group: 'Motion.M1&group=Brand' }],
      ['removeParamGroup', { group: ['Motion.M1', 'Motion.M0'] }],
      ['removeParamGroup', { group: 'Motion.M1', template: 'motion' }],
    ];
    for (const [name, input] of cases) {
      it(`${name} ${JSON.stringify(input)?.slice(0, 100)}`, async function () {
        const err = await expectRejection(runOperation(client, op(name), input), 'EINPUT');
        assert.ok(err.message.length < 400, err.message.slice(0, 100));
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
