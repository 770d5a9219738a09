/**
 * lib/ha on its own: the object id, the command reading (a stranger's message), the config read
 * back (someone else's), and the bounds. The behaviour over a real broker is test/ha-broker.test.ts.
 */
import { strict as assert } from 'node:assert';
import { parseCommand, MAX_COMMAND_BYTES } from '../lib/ha/commands';
import { componentsOf, discoveryConfig, droppedComponents } from '../lib/ha/discovery';
import { haEntities, platformOfKey } from '../lib/ha/entities';
import { PacedQueue, TokenBucket } from '../lib/ha/rate';
import { haSettings } from '../lib/ha/settings';
import { IpcamError } from '../lib/errors/errors';
import { HaTopics, objectIdOf } from '../lib/ha/topics';

const topics = new HaTopics('homeassistant', 'ipcam', 'ipcam_cam');
const settings = haSettings({ relays: '2,1', inputs: '1', plates: 'Residents', server: 'srv', snapshot: 'plate' });

describe('lib/ha', function () {
  it('the object id is ipcam_ and the device node id, every character outside [a-zA-Z0-9_-] as _', function () {
    assert.equal(objectIdOf('a1b2.c3:d-e_f'), 'ipcam_a1b2_c3_d-e_f');
    assert.equal(objectIdOf('../#+/x y'), 'ipcam_______x_y');
  });

  it('settings: defaults for blanks, EINPUT for a topic root with a wildcard, an empty level or a space', function () {
    const s = haSettings({});
    assert.deepEqual({ ...s }, { prefix: 'homeassistant', base: 'ipcam', relays: [], pulse: 500, inputs: [], snapshot: 'none', plates: undefined, server: false });
    for (const base of ['a/#', 'a/+/b', 'a//b', '/a', 'a b', 'x'.repeat(65)]) assert.throws(() => haSettings({ base }), /Base topic/);
    assert.throws(() => haSettings({ relays: '1,100' }), /Relays/);
  });

  it('settings: a refused one is the EINPUT of every node setting, naming it and its nearest valid value', function () {
    assert.throws(() => haSettings({ pulse: '0' }), (err: unknown) => {
      assert.ok(err instanceof IpcamError);
      assert.equal(err.code, 'EINPUT');
      assert.match(err.message, /^Pulse \(ms\) must be a whole number from 1 to 3600000, got "0" \(nearest valid value: "1"\); nothing is sent until the setting pulse "0" is changed and deployed$/);
      assert.equal(err.brief, 'pulse 1?');
      return true;
    });
    assert.throws(() => haSettings({ snapshot: 'plates' }), /Picture must be one of none, plate, got "plates" \(nearest valid value: "plate"\)/);
  });

  it('reads only the commands the settings name, with their exact payloads', function () {
    const read = (key: string, payload: string | Buffer): string => {
      const r = parseCommand(topics, settings, `ipcam/ipcam_cam/${key}/set`, Buffer.isBuffer(payload) ? payload : Buffer.from(payload));
      return r.ok ? JSON.stringify(r.command) : `${r.kind}: ${r.reason()}`;
    };
    assert.equal(read('relay_1', 'ON'), '{"kind":"switch","output":1,"on":true}');
    assert.equal(read('relay_2', 'OFF'), '{"kind":"switch","output":2,"on":false}');
    assert.equal(read('relay_2_pulse', 'PRESS'), '{"kind":"pulse","output":2}');
    assert.match(read('relay_3', 'ON'), /^relay: a command for relay 3, which is not in Relays \(1,2\)$/);
    assert.match(read('relay_01', 'ON'), /^topic:/);
    for (const payload of ['on', ' ON', 'ON ', 'true', '1', '{"state":"ON"}', '']) assert.match(read('relay_1', payload), /^payload:/);
    assert.match(read('relay_1_pulse', 'ON'), /^payload:/);
    assert.match(read('relay_1', Buffer.alloc(MAX_COMMAND_BYTES + 1, 0x41)), /^size: a command of 257 bytes/);
    assert.equal(read('plate_add', ' AB 123 '), '{"kind":"plate-add","plate":{"plate":"AB 123","group":"Residents"}}');
    assert.match(read('plate_delete', 'A\nB'), /^plate: .*control character/);
    assert.match(read('plate_add', Buffer.from([0xff, 0xfe])), /^plate: a plate that is not UTF-8 text$/);
    assert.match(read('plate_add', 'X'.repeat(33)), /^plate: .*at most 32/);
    assert.match(read('input_1', 'ON'), /^topic: a command for "input_1", which is no entity/);
    const other = parseCommand(topics, settings, 'ipcam/ipcam_other/relay_1/set', Buffer.from('ON'));
    assert.equal(other.ok, false);
    const none = parseCommand(topics, haSettings({ relays: '1' }), 'ipcam/ipcam_cam/plate_add/set', Buffer.from('AB1'));
    assert.ok(!none.ok && none.kind === 'plates');
  });

  it('believes only our own component ids in a config read back, and takes their platform from the id', function () {
    const hostile = Buffer.from(JSON.stringify({ cmps: { relay_7: { p: 'lock', cmd_t: 'x' }, input_3: { p: 'binary_sensor' }, evil: { p: 'lock', x: 1 }, ['__proto__']: { p: 'x', y: 1 }, relay_1000: { p: 'switch', x: 1 }, plate: 'not an object' } }));
    const read = componentsOf(hostile);
    assert.deepEqual([...read], [['relay_7', 'live'], ['input_3', 'removed']]);
    assert.deepEqual([...droppedComponents(read, settings)], [['relay_7', 'switch']]);
    for (const junk of [Buffer.from('{'), Buffer.from('[]'), Buffer.from('null'), Buffer.alloc(70_000, 0x20)]) assert.equal(componentsOf(junk).size, 0);
    assert.equal(platformOfKey('relay_1_pulse'), 'button');
    assert.equal(platformOfKey('relay_0'), undefined);
  });

  it('the config: dev, o, availability of both (all), each entity in the abbreviations, and dropped ones as their platform alone', function () {
    const config = discoveryConfig(settings, topics, { name: 'Gate', model: 'M1' }, { name: 'pkg', sw: '1.0.0' }, new Map([['relay_9', 'switch'], ['relay_1', 'switch']]));
    assert.deepEqual(config['dev'], { ids: ['ipcam_cam'], name: 'Gate', mdl: 'M1' });
    assert.deepEqual(config['avty'], [{ t: 'ipcam/bridge' }, { t: 'ipcam/ipcam_cam/availability' }]);
    assert.equal(config['avty_mode'], 'all');
    const cmps = config['cmps'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(cmps), [...haEntities(settings).map((e) => e.key), 'relay_9']);
    assert.deepEqual(cmps['relay_9'], { p: 'switch' });
    assert.equal(cmps['relay_1']?.['cmd_t'], 'ipcam/ipcam_cam/relay_1/set', 'a dropped id that the settings give stays whole');
    assert.deepEqual(Object.keys(cmps['plate_add'] ?? {}), ['p', 'uniq_id', 'name', 'cmd_t', 'min', 'max', 'ic']);
  });

  it('bounds: the token bucket lets its burst through, then its rate; the paced queue holds at most its max', async function () {
    let now = 0;
    const bucket = new TokenBucket(5, 5, () => now);
    assert.equal([...Array(10)].filter(() => bucket.take()).length, 5);
    now = 1000;
    assert.equal([...Array(10)].filter(() => bucket.take()).length, 5);
    const ran: number[] = [];
    const queue = new PacedQueue<number>({ interval: 10, max: 3, run: async (n) => void ran.push(n) });
    const pushed = [1, 2, 3, 4, 5].map((n) => queue.push(n));
    assert.deepEqual(pushed, [true, true, true, true, false], 'one runs at once, three wait');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(ran, [1, 2, 3, 4]);
    queue.close();
    assert.equal(queue.push(6), false);
  });
});
