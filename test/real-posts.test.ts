/**
 * Issue 23: devices as they really post. The parser and the event server take every real form
 * (recorder plates filed by group, empty keep-alives, tracking posts, a 20-digit time, `leave`,
 * one-target items), and the simulator speaks those forms: its posts and answers are checked
 * against the captures and the field notes, so it cannot drift back to speaking as the parser
 * would like.
 */
import { strict as assert } from 'node:assert';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isTrackingPost, listTypeOfGroup, parseDevicePost, type DevicePost, type OtherEvent, type PlateDetection } from '../lib/events/parse';
import { groupFilter, inGroups } from '../lib/events/filter';
import { EventServer, SUCCESS_DOCUMENT, type ReceivedPost } from '../lib/events/server';
import { startSimulator, type Simulator } from '../lib/simulator';
import { BROKEN_CURRENT_TIME, buildAlarmStatus, buildKeepAlive, buildPlateEvent, buildTrackingPost } from '../lib/simulator/events';
import { DeviceClient } from '../lib/transport/client';
import { parseXml, type XmlElement, type XmlValue } from '../lib/xml/codec';
import { getDeviceInfo, identifyDevice, parseDeviceInfo } from '../lib/ops/device-info';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import {
  CAMERA_CONTENT_TYPE,
  RECORDER_CONTENT_TYPE,
  TWENTY_DIGIT_TIME,
  cameraPlateWithDirection,
  capture,
  mixedConnection,
  postOnOneConnection,
  recorderPlateInGroup,
  recorderPlateWithTime,
  trackingPost,
} from './real-forms';

const SENDER = '10.20.30.40';
const RECEIVED_AT = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const RECEIVED_ISO = '2026-01-02T03:04:05.678Z';

function only(posts: DevicePost[]): DevicePost {
  assert.equal(posts.length, 1, `expected one post, got ${JSON.stringify(posts)}`);
  return posts[0] as DevicePost;
}

function plateOf(body: string): PlateDetection {
  const post = only(parseDevicePost(body, SENDER, RECEIVED_AT));
  assert.equal(post.kind, 'plate');
  return post as PlateDetection;
}

/** Every element path of a document (`config/licensePlateListInfo/item/...`), each once. */
function paths(el: XmlElement, prefix = ''): Set<string> {
  const here = prefix ? `${prefix}/${el.name}` : el.name;
  const out = new Set([here]);
  for (const c of el.children) for (const p of paths(c, here)) out.add(p);
  return out;
}

/** Every `type` attribute by element path. */
function typeAttrs(el: XmlElement, prefix = ''): Map<string, string> {
  const here = prefix ? `${prefix}/${el.name}` : el.name;
  const out = new Map<string, string>();
  if (el.attrs['type'] !== undefined) out.set(here, el.attrs['type']);
  for (const c of el.children) for (const [k, v] of typeAttrs(c, here)) out.set(k, v);
  return out;
}

function sorted(set: Iterable<string>): string[] {
  return [...set].sort();
}

// ---------------------------------------------------------------------------------------------

describe('real posts: recorder plate groups', () => {
  it('group names that name a list give that list, case and spaces ignored; any other name is unknown', () => {
    const cases: Array<[string | undefined, string]> = [
      ['Whitelist', 'whiteList'],
      ['whitelist', 'whiteList'],
      ['White List', 'whiteList'],
      ['Allow list', 'whiteList'],
      ['ALLOWLIST', 'whiteList'],
      ['Blacklist', 'blackList'],
      ['Block List', 'blackList'],
      ['deny list', 'blackList'],
      ['Temporary', 'temporaryList'],
      ['Temporary visitors', 'temporaryList'],
      ['temporaryList', 'temporaryList'],
      ['Stranger', 'strangerList'],
      ['strangers', 'strangerList'],
      ['Residents', 'unknown'],
      ['Whitelisted', 'unknown'],
      ['My whitelist', 'unknown'],
      ['', 'unknown'],
      [undefined, 'unknown'],
    ];
    for (const [group, list] of cases) assert.equal(listTypeOfGroup(group), list, String(group));
  });

  it('a recorder post by group only (the vendor form): group, owner and the list its group names', () => {
    const white = plateOf(recorderPlateInGroup('WL1', 'Whitelist', 'A. Smith'));
    assert.deepEqual([white.plate, white.listType, white.group, white.owner], ['WL1', 'whiteList', 'Whitelist', 'A. Smith']);
    const residents = plateOf(recorderPlateInGroup('RS1', 'Residents'));
    assert.deepEqual([residents.plate, residents.listType, residents.group, residents.owner], ['RS1', 'unknown', 'Residents', undefined]);
    assert.equal('owner' in residents, false, 'no owner key when none is sent');
  });

  it('vehicleListType, where a recorder sends it beside the group, decides the list', () => {
    const doc = recorderPlateInGroup('VL1', 'Whitelist').replace('</licensePlateMatchInfo>', '</licensePlateMatchInfo><vehicleListType>blackList</vehicleListType>');
    const plate = plateOf(doc);
    assert.deepEqual([plate.listType, plate.group], ['blackList', 'Whitelist']);
  });

  it('the groups filter: names compared without case or spaces; empty passes every plate, a set one no plate without a group', () => {
    const groups = groupFilter(' Residents , staff');
    assert.ok(groups);
    assert.equal(inGroups(groups, 'residents'), true);
    assert.equal(inGroups(groups, 'Staff'), true);
    assert.equal(inGroups(groups, 'Whitelist'), false);
    assert.equal(inGroups(groups, undefined), false);
    assert.equal(groupFilter(''), undefined);
    assert.equal(groupFilter(' , '), undefined);
    assert.equal(inGroups(undefined, undefined), true);
    assert.deepEqual(groupFilter(['Residents', 'Staff']), new Set(['residents', 'staff']));
    assert.throws(() => groupFilter(`Residents, ${'x'.repeat(65)}`), { code: 'EINPUT' });
  });
});

describe('real posts: one value per meaning', () => {
  it('direction: leave (documented) and away (posted) are away; approach stays; any other word is left out', () => {
    for (const [posted, expected] of [
      ['leave', 'away'],
      ['LEAVE', 'away'],
      ['away', 'away'],
      ['approach', 'approach'],
      ['north', undefined],
    ] as const) {
      const plate = plateOf(cameraPlateWithDirection(posted));
      assert.equal(plate.direction, expected, posted);
      assert.equal(plate.plate, 'ABC1234', 'the plate is kept whatever the direction');
    }
  });

  it('a recorder single-target eventInfo/item is an array in data, as two targets are', () => {
    const one = only(parseDevicePost(capture('nvr-v2/line-crossing.xml'), SENDER, RECEIVED_AT)) as OtherEvent;
    const data = one.data as Record<string, Record<string, XmlValue>>;
    const items = data['eventInfo']?.['item'];
    assert.ok(Array.isArray(items), `eventInfo.item: ${JSON.stringify(items)}`);
    assert.equal(items.length, 1);
    assert.equal((items[0] as Record<string, XmlValue>)['targetId'], '1309');
    assert.ok(Array.isArray(data['targetListInfo']?.['item']), 'targetListInfo.item too');

    const doc = capture('nvr-v2/line-crossing.xml');
    const item = /<eventInfo>([\s\S]*?)<\/eventInfo>/.exec(doc)?.[1] ?? '';
    const two = only(parseDevicePost(doc.replace(item, item + item.replace('<targetId>1309', '<targetId>1310')), SENDER, RECEIVED_AT)) as OtherEvent;
    const twoItems = (two.data as Record<string, Record<string, XmlValue>>)['eventInfo']?.['item'];
    assert.ok(Array.isArray(twoItems));
    assert.deepEqual(
      twoItems.map((i) => (i as Record<string, XmlValue>)['targetId']),
      ['1309', '1310'],
    );
  });

  it('every item of every captured event is an array', () => {
    const check = (value: XmlValue, where: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => check(v, `${where}[${i}]`));
      else if (typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'item') assert.ok(Array.isArray(v), `${where}.item is not an array`);
          check(v, `${where}.${k}`);
        }
      }
    };
    for (const name of ['nvr-v2/line-crossing.xml', 'nvr-v2/region-intrusion.xml', 'nvr-v2/video-metadata.xml', 'nvr-v2/target-counting-by-area.xml', 'nvr-v2/face-detection.xml', 'ipc-v1x/line-crossing.xml']) {
      const post = only(parseDevicePost(capture(name), SENDER, RECEIVED_AT));
      assert.equal(post.kind, 'event', name);
      check((post as OtherEvent).data, name);
    }
  });
});

describe('real posts: nothing lost for one odd field', () => {
  it('a 20-digit currentTime is the receive time; the plate and everything else are kept', () => {
    const plate = plateOf(recorderPlateWithTime(TWENTY_DIGIT_TIME));
    assert.equal(plate.time, RECEIVED_ISO);
    assert.equal(plate.plate, 'JP116D');
    assert.equal(plate.channel, 2);
    assert.equal(plate.device.mac, '58:5B:69:40:F4:0D');
    // The same number in events and alarm posts.
    const event = only(parseDevicePost(capture('nvr-v2/line-crossing.xml').replace(/<currentTime>\d+/, `<currentTime>${TWENTY_DIGIT_TIME}`), SENDER, RECEIVED_AT));
    assert.equal(event.time, RECEIVED_ISO);
    // A time a date can still hold is the device's.
    assert.equal(plateOf(recorderPlateWithTime('1772210268473000')).time, '2026-02-27T16:37:48.473Z');
  });

  it('a channel or a confidence out of range is left out; the plate is kept', () => {
    for (const channel of ['99999999999999999999', '-1', '1e3', '']) {
      const doc = capture('nvr-v2/vehicle-lpr.xml').replace('<channelId>2</channelId>', `<channelId>${channel}</channelId>`);
      const plate = plateOf(doc);
      assert.equal(plate.plate, 'JP116D', channel);
      assert.equal('channel' in plate, false, `channel ${channel}`);
    }
    for (const count of ['999999', '-5']) {
      const doc = capture('ipc-v1x/lpr.xml').replace('<vehicleListType', `<PlateConfidence count="${count}"/><vehicleListType`);
      const plate = plateOf(doc);
      assert.equal(plate.plate, 'ABC1234');
      assert.equal('confidence' in plate, false, `count ${count}`);
    }
    assert.equal(plateOf(capture('ipc-v1x/lpr.xml').replace('<vehicleListType', '<PlateConfidence count="9950"/><vehicleListType')).confidence, 99.5);
  });

  it('an empty post is a keep-alive of its sender, at the receive time', () => {
    for (const body of ['', Buffer.alloc(0), '\r\n']) {
      assert.deepEqual(parseDevicePost(body, SENDER, RECEIVED_AT), [{ kind: 'keepalive', device: { ip: SENDER }, time: RECEIVED_ISO }]);
    }
  });

  it('a tracking post is told from its bytes and gives no post; no capture, plate or event is one', () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(isTrackingPost(Buffer.from(trackingPost(i))), true);
      assert.deepEqual(parseDevicePost(trackingPost(i), SENDER, RECEIVED_AT), []);
    }
    for (const name of ['ipc-v1x/lpr.xml', 'nvr-v2/vehicle-lpr.xml', 'nvr-v2/keepalive.xml', 'ipc-v1x/keepalive.xml', 'ipc-v1x/video-metadata.xml', 'nvr-v2/video-metadata.xml']) {
      assert.equal(isTrackingPost(Buffer.from(capture(name))), false, name);
    }
    // A plate that also carries a traject list is a plate.
    const both = capture('ipc-v1x/lpr.xml').replace('</config>', '<traject type="list" count="0"/></config>');
    assert.equal(isTrackingPost(Buffer.from(both)), false);
    assert.equal(plateOf(both).plate, 'ABC1234');
    // A longer name that starts the same is not the element.
    assert.equal(isTrackingPost(Buffer.from('<config><trajectory/></config>')), false);
  });
});

// ---------------------------------------------------------------------------------------------

describe('real posts: the event server answers every one 200', () => {
  let server: EventServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('one kept-alive connection: empty keep-alive, 20 tracking posts, a 20-digit-time plate, a normal plate: 23 times 200 with the success document, tracking counted and dropped', async () => {
    const warnings: string[] = [];
    server = new EventServer({ port: 0, bind: '127.0.0.1', onWarning: (w) => warnings.push(w) });
    await server.start();
    const received: ReceivedPost[] = [];
    server.subscribe({ onPost: (p) => received.push(p) });
    const before = Date.now();
    const answers = await postOnOneConnection(server.port, mixedConnection());
    const after = Date.now();
    assert.equal(answers.length, 23);
    assert.deepEqual(
      answers.filter((a) => a.status !== 200 || a.body !== SUCCESS_DOCUMENT),
      [],
    );
    assert.equal(server.trackingPosts, 20);
    const posts = received.flatMap((r) => r.posts);
    assert.deepEqual(
      posts.map((p) => p.kind),
      ['keepalive', 'plate', 'plate'],
    );
    assert.deepEqual(posts[0]?.device, { ip: '127.0.0.1' }, 'the empty keep-alive is its sender');
    const [odd, normal] = posts.slice(1) as PlateDetection[];
    assert.equal(odd?.plate, 'JP116D');
    const oddTime = Date.parse(odd?.time ?? '');
    assert.ok(oddTime >= before - 1 && oddTime <= after + 1, `the receive time, got ${String(odd?.time)}`);
    assert.equal(normal?.plate, 'ABC1234');
    assert.equal(normal?.time, '2024-11-19T19:40:34.584Z');
    assert.deepEqual(warnings, [], 'nothing refused, nothing warned');
  });

  it('hostile: 8 connections at once, each 50 tracking posts then a plate: every post 200, the 8 plates delivered, 400 tracking posts counted, nothing else', async () => {
    server = new EventServer({ port: 0, bind: '127.0.0.1' });
    await server.start();
    const received: ReceivedPost[] = [];
    server.subscribe({ onPost: (p) => received.push(p) });
    const port = server.port;
    const runs = Array.from({ length: 8 }, (_, c) =>
      postOnOneConnection(port, [...Array.from({ length: 50 }, (_, i) => ({ body: trackingPost(c * 50 + i) })), { body: recorderPlateInGroup(`FL${c}`, 'Residents'), contentType: RECORDER_CONTENT_TYPE }]),
    );
    const answers = (await Promise.all(runs)).flat();
    assert.equal(answers.length, 408);
    assert.ok(answers.every((a) => a.status === 200 && a.body === SUCCESS_DOCUMENT));
    assert.equal(server.trackingPosts, 400);
    const plates = received.flatMap((r) => r.posts);
    assert.deepEqual(plates.map((p) => (p.kind === 'plate' ? p.plate : p.kind)).sort(), Array.from({ length: 8 }, (_, c) => `FL${c}`).sort());
  });

  it('hostile: a maxBody post of tracking-like markup (thousands of near-miss names, then traject) is one tracking post; one with smartType among them is parsed as usual', async () => {
    const maxBody = 1024 * 1024;
    server = new EventServer({ port: 0, bind: '127.0.0.1', maxBody });
    await server.start();
    const received: ReceivedPost[] = [];
    server.subscribe({ onPost: (p) => received.push(p) });
    const nearMiss = '<smartTypes/><messageTypes/><trajectory/>';
    const filler = nearMiss.repeat(Math.floor((maxBody - 200) / nearMiss.length));
    const tracking = `<config>${filler}<traject type="list" count="0"/></config>`;
    assert.ok(Buffer.byteLength(tracking) <= maxBody);
    const [first] = await postOnOneConnection(server.port, [{ body: tracking }]);
    assert.equal(first?.status, 200);
    assert.equal(server.trackingPosts, 1);
    assert.deepEqual(received.flatMap((r) => r.posts), []);
    // The same with a smartType: not a tracking post, so it goes to the parser, which bounds it (413 over maxNodes).
    const [second] = await postOnOneConnection(server.port, [{ body: tracking.replace('<config>', '<config><smartType>VEHICE</smartType>') }]);
    assert.equal(second?.status, 413);
    assert.equal(server.trackingPosts, 1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('real posts: the simulator speaks as devices do (captures, field notes)', () => {
  it('a recorder plate has the element paths of the captured one, plus the group filing of the field notes; no vehicleListType, no type attribute', () => {
    const captured = parseXml(capture('nvr-v2/vehicle-lpr.xml'));
    const sim = parseXml(buildPlateEvent('nvr', { plate: 'SIM1', listType: 'whiteList', vehicle: { type: 'mpv', color: 'white', brand: 'GMC', model: 'GMC_SAVANA' }, channel: 2 }));
    const fieldNotes = ['config/licensePlateListInfo/item/licensePlateMatchInfo', 'config/licensePlateListInfo/item/licensePlateMatchInfo/groupName'];
    assert.deepEqual(sorted(paths(sim)), sorted([...paths(captured), ...fieldNotes]));
    assert.deepEqual(sorted(typeAttrs(sim).keys()), [], 'recorder posts carry no type attributes');
    assert.equal(sim.attrs['version'], captured.attrs['version']);
    const group = parseXml(buildPlateEvent('nvr', { plate: 'SIM2', group: 'Residents', owner: 'Ann', images: false }));
    assert.ok(paths(group).has('config/licensePlateListInfo/item/licensePlateMatchInfo/carOwner'));
    assert.equal(paths(group).has('config/licensePlateListInfo/item/vehicleListType'), false);
  });

  it('a camera plate (old firmware) has the element paths and type attributes of the captured one', () => {
    const captured = parseXml(capture('ipc-v1x/lpr.xml'));
    const sim = parseXml(buildPlateEvent('ipc', { plate: 'SIM3', listType: 'whiteList', extended: false }));
    assert.deepEqual(sorted(paths(sim)), sorted(paths(captured)));
    assert.deepEqual([...typeAttrs(sim)].sort(), [...typeAttrs(captured)].sort());
  });

  it('keep-alives have the element paths of the captured ones; the empty one is empty', () => {
    for (const [format, name] of [
      ['ipc', 'ipc-v1x/keepalive.xml'],
      ['nvr', 'nvr-v2/keepalive.xml'],
    ] as const) {
      assert.deepEqual(sorted(paths(parseXml(buildKeepAlive(format)))), sorted(paths(parseXml(capture(name)))), name);
    }
    assert.equal(buildKeepAlive('ipc', { empty: true }), '');
  });

  it('alarm status posts have the element paths of the captured ones', () => {
    for (const [format, name, alarm] of [
      ['ipc', 'ipc-v1x/alarm-status.xml', 'vehiceAlarm'],
      ['nvr', 'nvr-v2/alarm-status.xml', 'perimeterAlarm'],
    ] as const) {
      assert.deepEqual(sorted(paths(parseXml(buildAlarmStatus(format, { alarm })))), sorted(paths(parseXml(capture(name)))), name);
    }
  });

  it('a tracking post is a traject list without smartType or messageType; the 20-digit time is the field notes one', () => {
    const doc = buildTrackingPost();
    assert.match(doc, /<traject type="list"/);
    assert.doesNotMatch(doc, /smartType|messageType/);
    assert.equal(isTrackingPost(Buffer.from(doc)), true);
    assert.equal(BROKEN_CURRENT_TIME, TWENTY_DIGIT_TIME);
    assert.match(buildPlateEvent('nvr', { plate: 'T20', currentTime: BROKEN_CURRENT_TIME, images: false }), new RegExp(`<currentTime>${TWENTY_DIGIT_TIME}</currentTime>`));
  });

  describe('over the wire', () => {
    let sim: Simulator;
    let collector: Server;
    let seen: Array<{ url: string; headers: IncomingHttpHeaders; body: string; socket: number }>;
    let url: string;

    beforeEach(async () => {
      sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
      seen = [];
      const sockets: unknown[] = [];
      collector = createServer((req, res) => {
        if (!sockets.includes(req.socket)) sockets.push(req.socket);
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), socket: sockets.indexOf(req.socket) });
          res.end(SUCCESS_DOCUMENT);
        });
      });
      await new Promise<void>((done) => collector.listen(0, '127.0.0.1', done));
      url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/alarm`;
    });

    afterEach(async () => {
      collector.closeAllConnections();
      await new Promise<void>((done) => collector.close(() => done()));
      await sim.close();
    });

    it('camera: application/xml; charset=utf-8, path-only request line, one kept-alive connection for plates, an empty keep-alive (Content-Length: 0) and a tracking burst', async () => {
      await sim.postEvent({ url, format: 'ipc', kind: 'keepalive', empty: true });
      await sim.postEvent({ url, format: 'ipc', kind: 'tracking', count: 20, ratePerSecond: 200 });
      await sim.postEvent({ url, format: 'ipc', plate: 'CAM1', images: false, currentTime: BROKEN_CURRENT_TIME });
      assert.equal(seen.length, 22);
      for (const r of seen) {
        assert.equal(r.headers['content-type'], CAMERA_CONTENT_TYPE);
        assert.equal(r.url, '/alarm');
        assert.equal(r.socket, 0, 'a camera keeps its connection');
      }
      assert.equal(seen[0]?.headers['content-length'], '0');
      assert.equal(seen[0]?.body, '');
      const tracking = seen.slice(1, 21);
      for (const r of tracking) {
        assert.match(r.body, /<traject type="list"/);
        assert.doesNotMatch(r.body, /<smartType|<messageType/);
      }
      assert.match(seen[21]?.body ?? '', new RegExp(`<currentTime type="tint64">${TWENTY_DIGIT_TIME}</currentTime>`));
    });

    it('recorder: application/soap+xml, Connection: close, absolute URL; a plate by group only', async () => {
      await sim.postEvent({ url, format: 'nvr', plate: 'NVR1', group: 'Residents', images: false });
      const [r] = seen;
      assert.ok(r);
      assert.equal(r.headers['content-type'], RECORDER_CONTENT_TYPE);
      assert.equal(r.headers['connection'], 'close');
      assert.equal(r.url, url);
      assert.match(r.body, /<licensePlateMatchInfo><groupName><!\[CDATA\[Residents\]\]><\/groupName><\/licensePlateMatchInfo>/);
      assert.doesNotMatch(r.body, /vehicleListType/);
    });

    it('the control API posts each new form: empty keep-alive, tracking burst, 20-digit time, plate by group only', async () => {
      const control = async (body: object): Promise<number> => {
        const res = await fetch(`http://${sim.host}:${sim.port}/_sim/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, ...body }) });
        await res.arrayBuffer();
        return res.status;
      };
      assert.equal(await control({ kind: 'keepalive', empty: true }), 200);
      assert.equal(await control({ kind: 'tracking', count: 5 }), 200);
      assert.equal(await control({ format: 'nvr', plate: 'GRP1', group: 'Staff', currentTime: BROKEN_CURRENT_TIME, images: false }), 200);
      assert.equal(seen.length, 7);
      assert.equal(seen[0]?.body, '');
      assert.equal(seen.slice(1, 6).filter((r) => /<traject type="list"/.test(r.body)).length, 5);
      assert.match(seen[6]?.body ?? '', /<groupName><!\[CDATA\[Staff\]\]><\/groupName>/);
      assert.match(seen[6]?.body ?? '', new RegExp(`<currentTime>${TWENTY_DIGIT_TIME}</currentTime>`));
      assert.equal(await control({ currentTime: '12ab' }), 400);
      assert.equal(await control({ group: 'x'.repeat(65) }), 400);
      assert.equal(await control({ kind: 'keepalive', empty: 'yes' }), 400);
    });
  });

  it('GetDeviceInfo answers softwareVersion and softwareBuildDate, and identify reads the version as firmware', async () => {
    const sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
    const client = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD });
    try {
      const info = await getDeviceInfo(client);
      assert.ok('softwareVersion' in info.fields && 'softwareBuildDate' in info.fields, JSON.stringify(info.fields));
      assert.equal('firmwareVersion' in info.fields, false);
      assert.equal('firmwareReleaseDate' in info.fields, false);
      assert.equal(info.firmware, sim.state.device.firmwareVersion);
      assert.equal((await identifyDevice(client)).firmware, sim.state.device.firmwareVersion);
    } finally {
      await client.close();
      await sim.close();
    }
  });

  it('older firmware naming firmwareVersion is still read', () => {
    const older = parseXml('<config version="1.0" xmlns="http://www.ipc.com/ver10"><deviceInfo><firmwareVersion type="string"><![CDATA[4.0.1]]></firmwareVersion></deviceInfo></config>');
    const both = parseXml('<config version="1.0" xmlns="http://www.ipc.com/ver10"><deviceInfo><softwareVersion>5.2</softwareVersion><firmwareVersion>4.0.1</firmwareVersion></deviceInfo></config>');
    assert.equal(parseDeviceInfo(older).firmware, '4.0.1');
    assert.equal(parseDeviceInfo(both).firmware, '5.2');
  });
});
