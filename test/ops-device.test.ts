/**
 * The XML device section of the operation table (getDeviceInfo, getAlarmStatus, getPtzCaps,
 * get/setHttpPostConfig, modifyPassword): the exact request of each as the spec and field notes
 * write it, the parsed answer against the simulator over real sockets, bad input as EINPUT with
 * nothing sent, the destructive flag, and the new password nowhere.
 */
import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { IpcamError } from '../lib/errors/errors';
import { chooseOperation, REQUEST_OPERATIONS, runOperation, targetOf } from '../lib/ops';
import { startSimulator, type RecordedRequest, type Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { explainHttpPostFailure } from '../lib/ops/http-post';
import { expectRejection, SIM_PASSWORD, SIM_USER } from './helpers';
import { requestOp as op } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

const NS = 'http://www.ipc.com/ver10';
const DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';

describe('operations: XML device section', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  beforeEach(function () {
    sim.state.alarms.clear();
  });

  /** The one accepted request of this test to `path`. */
  function sent(path: string): RecordedRequest {
    const found = sim.state.requests.filter((r) => r.auth !== 'rejected' && r.path === path);
    assert.equal(found.length, 1, `requests to ${path}`);
    return found[0] as RecordedRequest;
  }

  describe('requests as the spec and field notes write them', function () {
    const cases: Array<[string, unknown, 'GET' | 'POST', string]> = [
      ['getDeviceInfo', {}, 'GET', '/GetDeviceInfo'],
      ['getDeviceInfo', undefined, 'GET', '/GetDeviceInfo'],
      ['getAlarmStatus', {}, 'POST', '/GetAlarmStatus'],
      ['getAlarmStatus', { channel: 2 }, 'POST', '/GetAlarmStatus/2'],
      ['getAlarmStatus', { channel: ' 3 ' }, 'POST', '/GetAlarmStatus/3'],
      ['getPtzCaps', {}, 'POST', '/PtzGetCaps/1'],
      ['getPtzCaps', { channel: '4' }, 'POST', '/PtzGetCaps/4'],
      ['getHttpPostConfig', {}, 'POST', '/GetHttpPostConfig'],
    ];
    for (const [name, input, method, expected] of cases) {
      it(`${name} ${JSON.stringify(input)} -> ${method} ${expected}, no body`, function () {
        const build = op(name).build;
        assert.ok(build);
        const request = build(input);
        assert.equal(targetOf(request), expected);
        assert.equal(request.method ?? 'POST', method);
        assert.equal(request.xml, undefined);
      });
    }

    it('setHttpPostConfig: POST /SetHttpPostConfig with the httpPost block, strings in CDATA', async function () {
      await runOperation(client, op('setHttpPostConfig'), { server: '10.0.0.5', port: '5002', path: '/lpr', keepalive: 60 });
      const req = sent('/SetHttpPostConfig');
      assert.equal(req.method, 'POST');
      assert.match(String(req.headers['content-type']), /^application\/xml/);
      assert.equal(
        req.body,
        `${DECL}<config version="1.0" xmlns="${NS}"><httpPost><bSwitch type="boolean">true</bSwitch><serverIp type="string"><![CDATA[10.0.0.5]]></serverIp>` +
          '<serverPort type="uint16">5002</serverPort><keepaliveTimeval type="uint32">60</keepaliveTimeval><URL type="string"><![CDATA[/lpr]]></URL></httpPost></config>',
      );
    });

    it('modifyPassword: POST /ModifyPassword with userName (when given) and newPassword in CDATA', async function () {
      const own = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
      const c = new DeviceClient({ host: '127.0.0.1', port: own.port, username: SIM_USER, password: SIM_PASSWORD });
      try {
        await runOperation(c, op('modifyPassword'), { newPassword: 'N]]>ew <&>', user: SIM_USER });
        const req = own.state.requests.find((r) => r.path === '/ModifyPassword' && r.auth !== 'rejected');
        assert.ok(req);
        assert.equal(req.method, 'POST');
        assert.equal(
          req.body,
          `${DECL}<config version="1.0" xmlns="${NS}"><userName type="string"><![CDATA[${SIM_USER}]]></userName>` +
            '<newPassword type="string"><![CDATA[N]]]]><![CDATA[>ew <&>]]></newPassword></config>',
        );
        assert.equal(own.state.account.password, 'N]]>ew <&>');
      } finally {
        await c.close();
        await own.close();
      }
    });
  });

  describe('against the simulator', function () {
    it('getDeviceInfo gives the named fields and every field typed', async function () {
      const { payload } = await runOperation(client, op('getDeviceInfo'), {});
      const info = payload as Record<string, unknown>;
      assert.equal(info['name'], 'Simulated IPC');
      assert.equal(info['model'], 'SIM-IPC-2MP');
      assert.equal(info['firmware'], '5.1.2.0-sim');
      assert.equal(info['apiVersion'], '1.7');
      assert.equal(info['mac'], '58:5b:69:00:00:01');
      assert.equal(info['sn'], 'SIM0000000001');
      assert.equal(info['kernelVersion'], '4.9.37');
      assert.equal(info['alarmInCount'], 2);
      assert.equal(info['deviceName'], 'Simulated IPC');
    });

    it('getAlarmStatus: one entry per element or list item, ids as numbers, null where none', async function () {
      sim.state.io.inputs.set(2, true);
      sim.state.io.levels.motion.set(1, { level: 90, threshold: 40 });
      sim.state.alarms.raise('vehicleAlarm');
      try {
        const { payload } = await runOperation(client, op('getAlarmStatus'), {});
        assert.deepEqual(payload, [
          { alarm: 'motionAlarm', id: 1, active: true },
          { alarm: 'motionAlarm', id: 2, active: false },
          { alarm: 'sensorAlarmIn', id: 1, active: false },
          { alarm: 'sensorAlarmIn', id: 2, active: true },
          { alarm: 'vehicleAlarm', id: null, active: true },
          { alarm: 'intrusionAlarm', id: null, active: false },
        ]);
      } finally {
        sim.state.io.inputs.set(2, false);
        sim.state.io.levels.motion.set(1, { level: 0, threshold: 40 });
      }
    });

    it('getAlarmStatus: an alarm drops to false after its hold time; a channel the device has not is EDEVICE 12', async function () {
      sim.state.alarms.raise('motionAlarm', 2, 20);
      const first = (await runOperation(client, op('getAlarmStatus'), { channel: 1 })).payload as Array<{ alarm: string; id: unknown; active: boolean }>;
      assert.equal(first.find((a) => a.alarm === 'motionAlarm' && a.id === 2)?.active, true);
      await sleep(40);
      const later = (await runOperation(client, op('getAlarmStatus'), { channel: 1 })).payload as Array<{ alarm: string; id: unknown; active: boolean }>;
      assert.equal(later.find((a) => a.alarm === 'motionAlarm' && a.id === 2)?.active, false);
      const err = await expectRejection(runOperation(client, op('getAlarmStatus'), { channel: 9 }), 'EDEVICE');
      assert.equal(err.deviceCode, 12);
    });

    it('getPtzCaps gives the speed range and the other caps typed', async function () {
      sim.state.ptz.speedRange = { min: 2, max: 6 };
      try {
        const { payload } = await runOperation(client, op('getPtzCaps'), { channel: 2 });
        assert.deepEqual(payload, { minSpeed: 2, maxSpeed: 6, presetMaxCount: 255, cruiseMaxCount: 8, cruisePresetMinSpeed: 1, cruisePresetMaxSpeed: 8, cruisePresetMaxHoldTime: 240, cruisePresetMaxCount: 16 });
      } finally {
        sim.state.ptz.speedRange = { min: 1, max: 8 };
      }
    });

    it('setHttpPostConfig stores the target; getHttpPostConfig reads it back typed', async function () {
      const set = await runOperation(client, op('setHttpPostConfig'), { server: 'events.example', port: 8080, path: '/cam', keepalive: '45', enabled: 'false' });
      assert.deepEqual(set.payload, { enabled: false, server: 'events.example', port: 8080, path: '/cam', keepalive: 45 });
      assert.deepEqual(sim.state.httpPost, { enabled: false, serverIp: 'events.example', serverPort: 8080, keepalive: 45, url: '/cam' });
      const { payload } = await runOperation(client, op('getHttpPostConfig'), {});
      const config = payload as Record<string, unknown>;
      assert.deepEqual({ ...config, v2: undefined }, { enabled: false, server: 'events.example', port: 8080, path: '/cam', keepalive: 45, protocol: 'HTTP', online: false, v2: undefined });
      assert.deepEqual(config['v2'], {
        postUrlConf: {
          urlList: [{ url: { protocol: 'http', domain: 'events.example', port: 8080, path: '/cam', authentication: 'none' } }],
          heatBeatSwitch: false,
          subscribeDateType: 'alarm',
        },
      });
      // Defaults: path /, keep-alive 30, on.
      await runOperation(client, op('setHttpPostConfig'), { server: '::1', port: 5002 });
      assert.deepEqual(sim.state.httpPost, { enabled: true, serverIp: '::1', serverPort: 5002, keepalive: 30, url: '/' });
    });

    it('a recorder refusing SetHttpPostConfig is told to use its web page', function () {
      const err = explainHttpPostFailure(new IpcamError('EDEVICE', 'Invalid request (device error 1)', { deviceCode: 1 }));
      assert.ok(err instanceof IpcamError);
      assert.equal(err.code, 'EDEVICE');
      assert.equal(err.deviceCode, 1);
      assert.match(err.message, /recorders have no SetHttpPostConfig/);
      const other = new IpcamError('EDEVICE', 'Range error', { deviceCode: 16 });
      assert.equal(explainHttpPostFailure(other), other);
    });
  });

  describe('modifyPassword', function () {
    const NEW = 'N3w-Pa55 wörd"secret';
    let own: Simulator;
    let c: DeviceClient;

    beforeEach(async function () {
      own = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
      c = new DeviceClient({ host: '127.0.0.1', port: own.port, username: SIM_USER, password: SIM_PASSWORD });
    });

    afterEach(async function () {
      await c.close();
      await own.close();
    });

    it('is destructive: chosen by msg it is refused with nothing sent; set in the node it runs', async function () {
      assert.equal(op('modifyPassword').destructive, true);
      for (const name of ['getDeviceInfo', 'getAlarmStatus', 'getPtzCaps', 'getHttpPostConfig', 'setHttpPostConfig']) assert.equal(op(name).destructive, false, name);
      assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', 'modifyPassword'), (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT');
      assert.equal(own.state.requestCount, 0);
      assert.equal(chooseOperation(REQUEST_OPERATIONS, 'modifyPassword', undefined).name, 'modifyPassword');
    });

    it('changes the password the device accepts on both interfaces; the result is { ok: true }', async function () {
      const result = await runOperation(c, op('modifyPassword'), { newPassword: NEW });
      assert.deepEqual(result, { payload: { ok: true } });
      // The old password is refused at once, over XML and CGI.
      await expectRejection(runOperation(c, op('getDeviceInfo'), {}), 'EAUTH');
      const fresh = new DeviceClient({ host: '127.0.0.1', port: own.port, username: SIM_USER, password: NEW });
      try {
        const info = await runOperation(fresh, op('getDeviceInfo'), {});
        assert.equal((info.payload as { model: string }).model, 'SIM-IPC-2MP');
        const cgi = await fresh.request({ path: '/cgi-bin/admin/param?action=list&group=Brand' });
        assert.equal(cgi.status, 200);
      } finally {
        await fresh.close();
      }
      const old = new DeviceClient({ host: '127.0.0.1', port: own.port, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      try {
        await expectRejection(old.request({ path: '/cgi-bin/admin/param?action=list&group=Brand' }), 'EAUTH');
      } finally {
        await old.close();
      }
    });

    it('the new password appears in no result or error', async function () {
      const texts: string[] = [];
      const note = (value: unknown): void => {
        texts.push(JSON.stringify(value), value instanceof Error ? `${value.message} ${value.stack ?? ''}` : '');
      };
      note(await runOperation(c, op('modifyPassword'), { newPassword: NEW, user: SIM_USER }));
      const withNew = new DeviceClient({ host: '127.0.0.1', port: own.port, username: SIM_USER, password: NEW });
      try {
        // A user the device has not: EDEVICE 20.
        const err = await expectRejection(runOperation(withNew, op('modifyPassword'), { newPassword: NEW, user: 'nobody' }), 'EDEVICE');
        assert.equal(err.deviceCode, 20);
        note(err);
        for (const bad of [`${NEW}\u0000`, `${NEW}\uffff`, `${NEW}\n`, NEW.repeat(4)]) {
          note(await expectRejection(runOperation(withNew, op('modifyPassword'), { newPassword: bad }), 'EINPUT'));
        }
      } finally {
        await withNew.close();
      }
      const joined = texts.join('\n');
      assert.ok(!joined.includes(NEW), 'the new password was in a result or an error');
      assert.ok(!joined.includes(SIM_PASSWORD), 'the device password was in a result or an error');
    });
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const cases: Array<[string, unknown]> = [
      ['getDeviceInfo', { verbose: true }],
      ['getAlarmStatus', { channel: 0 }],
      ['getAlarmStatus', { channel: 257 }],
      ['getAlarmStatus', { channel: '1e2' }],
      ['getAlarmStatus', { channel: 1.5 }],
      ['getAlarmStatus', { chanel: 1 }],
      ['getPtzCaps', { channel: -1 }],
      ['getPtzCaps', { channel: 'one' }],
      ['getHttpPostConfig', { server: 'x' }],
      ['setHttpPostConfig', {}],
      ['setHttpPostConfig', { server: '10.0.0.1' }],
      ['setHttpPostConfig', { server: 'bad host!', port: 5002 }],
      ['setHttpPostConfig', { server: 'a:b', port: 5002 }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 0 }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 65536 }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 1e20 }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, keepalive: 29 }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, keepalive: 121 }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, path: 'lpr' }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, path: '/lpr\r\nHost: x' }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, path: `/${'a'.repeat(256)}` }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, enabled: 'yes' }],
      ['setHttpPostConfig', { server: '10.0.0.1', port: 5002, url: '/' }],
      ['modifyPassword', {}],
      ['modifyPassword', { newPassword: '' }],
      ['modifyPassword', { newPassword: '   ' }],
      ['modifyPassword', { newPassword: 'x'.repeat(65) }],
      ['modifyPassword', { newPassword: 'ab\u0000c' }],
      ['modifyPassword', { newPassword: 'ab\ud800c' }],
      ['modifyPassword', { newPassword: 'good', user: 'a\nb' }],
      ['modifyPassword', { newPassword: 'good', user: 'u'.repeat(33) }],
      ['modifyPassword', { newPassword: 'good', password: 'old' }],
    ];
    for (const [name, input] of cases) {
      it(`${name} ${JSON.stringify(input).slice(0, 80)}`, async function () {
        await expectRejection(runOperation(client, op(name), input), 'EINPUT');
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
