import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import sinon from 'sinon';
import { IpcamError } from '../lib/errors/errors';
import { decodeImage, extractImages, imageBase64, PARSE_LIMITS, parseDevicePost, PostTooComplex, readDevicePost, type AlarmStatus, type DevicePost, type KeepAlive, type OtherEvent, type PlateDetection } from '../lib/events/parse';
import { buildAlarmStatus, buildKeepAlive, buildPlateEvent, formatDataTime, type EventFormat, type PlateEventSpec } from '../lib/simulator/events';
import { PLATE_JPEG, SNAPSHOT_JPEG } from '../lib/simulator/images';
import type { XmlValue } from '../lib/xml/codec';
import * as wellFormed from '../lib/xml/well-formed';
import { CAPTURES, prng } from './helpers';
import { cameraPlates, endlessImageTags, UNBOUNDED } from './hostile-xml';

/** Real device posts (images replaced by placeholder text), kept beside the repository. */
const SENDER = '10.20.30.40';
/** When the server received the post: the time of posts that carry none (keep-alives). */
const RECEIVED_AT = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const RECEIVED_ISO = '2026-01-02T03:04:05.678Z';

const PLATE_B64 = PLATE_JPEG.toString('base64');
const SCENE_B64 = SNAPSHOT_JPEG.toString('base64');

const CAMERA_LPR_TIME = '2024-11-19T19:40:34.584Z'; // currentTime 1732045234584193 (microseconds)
const CAMERA_PEA_TIME = '2019-07-19T09:21:46.584Z'; // currentTime 1563528106584193
const RECORDER_60 = { ip: '192.168.0.60', name: 'Device Name', mac: '58:5B:69:40:F4:0D' };
const RECORDER_50 = { ip: '192.168.0.50', name: 'Office', mac: '58:5B:69:12:F0:79' };

type Expectation =
  | { kind: 'plate'; post: PlateDetection }
  | { kind: 'keepalive'; post: KeepAlive }
  | { kind: 'alarmStatus'; post: AlarmStatus }
  | { kind: 'event'; post: Omit<OtherEvent, 'data'> };

/** What each capture must give; a capture without an entry here fails the listing test. */
const EXPECTED: Record<string, Expectation> = {
  'ipc-v1x/lpr.xml': {
    kind: 'plate',
    post: {
      kind: 'plate',
      plate: 'ABC1234',
      listType: 'whiteList',
      time: CAMERA_LPR_TIME,
      device: { ip: SENDER },
      // The scene is the source picture; the overview item is only used when there is none.
      images: { plate: 'BASE64_JPEG_PLATE_CROP', scene: 'BASE64_JPEG_SOURCE_IMAGE' },
    },
  },
  'ipc-v1x/keepalive.xml': {
    kind: 'keepalive',
    post: { kind: 'keepalive', time: RECEIVED_ISO, device: { name: 'Device Name', sn: 'NF40D099BCM0', ip: '192.168.1.192', mac: '58:5b:69:5a:84:bb' } },
  },
  'ipc-v1x/alarm-status.xml': {
    kind: 'alarmStatus',
    post: {
      kind: 'alarmStatus',
      // `11-19-2025 12:15:11 PM`: device-local time, read in this host's zone.
      time: new Date(2025, 10, 19, 12, 15, 11).toISOString(),
      device: { name: 'Viewtron IPC', sn: 'I84BB0A8D59C', ip: '192.168.1.57', mac: '58:5b:69:5a:84:bb' },
      alarms: [{ type: 'vehiceAlarm', id: 1, active: true }],
    },
  },
  'ipc-v1x/face-detection.xml': { kind: 'event', post: { kind: 'event', type: 'VFD', time: CAMERA_LPR_TIME, device: { ip: SENDER } } },
  'ipc-v1x/line-crossing.xml': { kind: 'event', post: { kind: 'event', type: 'PEA', time: CAMERA_PEA_TIME, device: { ip: SENDER } } },
  'ipc-v1x/perimeter-intrusion.xml': { kind: 'event', post: { kind: 'event', type: 'PEA', time: CAMERA_PEA_TIME, device: { ip: SENDER } } },
  'ipc-v1x/video-metadata.xml': { kind: 'event', post: { kind: 'event', type: 'VSD', time: CAMERA_LPR_TIME, device: { ip: SENDER } } },
  'ipc-v1x/zone-entry.xml': { kind: 'event', post: { kind: 'event', type: 'AOIENTRY', time: CAMERA_LPR_TIME, device: { ip: SENDER } } },
  'ipc-v1x/zone-exit.xml': { kind: 'event', post: { kind: 'event', type: 'AOILEAVE', time: CAMERA_LPR_TIME, device: { ip: SENDER } } },
  'nvr-v2/vehicle-lpr.xml': {
    kind: 'plate',
    post: {
      kind: 'plate',
      plate: 'JP116D',
      listType: 'unknown',
      channel: 2,
      time: '2026-02-27T16:37:48.473Z',
      device: RECORDER_60,
      vehicle: { type: 'mpv', color: 'white', brand: 'GMC', model: 'GMC_SAVANA' },
      images: { plate: 'BASE64_JPEG_PLATE_CROP', scene: 'BASE64_JPEG_OVERVIEW_IMAGE' },
    },
  },
  'nvr-v2/keepalive.xml': { kind: 'keepalive', post: { kind: 'keepalive', time: RECEIVED_ISO, device: RECORDER_50 } },
  'nvr-v2/alarm-status.xml': {
    kind: 'alarmStatus',
    post: { kind: 'alarmStatus', time: '2026-02-25T22:01:54.000Z', channel: 1, device: RECORDER_60, alarms: [{ type: 'perimeterAlarm', id: 1, active: true }] },
  },
  'nvr-v2/face-detection.xml': { kind: 'event', post: { kind: 'event', type: 'videoFaceDetect', time: '2026-02-27T17:17:22.929Z', channel: 1, device: RECORDER_50 } },
  'nvr-v2/line-crossing.xml': { kind: 'event', post: { kind: 'event', type: 'lineCrossing', time: '2026-02-25T22:04:50.604Z', channel: 1, device: RECORDER_60 } },
  'nvr-v2/region-intrusion.xml': { kind: 'event', post: { kind: 'event', type: 'regionIntrusion', time: '2026-02-25T22:01:54.604Z', channel: 1, device: RECORDER_60 } },
  'nvr-v2/target-counting-by-area.xml': {
    kind: 'event',
    post: { kind: 'event', type: 'targetCountingByArea', time: '2026-02-26T22:35:52.968Z', channel: 1, device: RECORDER_60 },
  },
  'nvr-v2/target-counting-by-line.xml': {
    kind: 'event',
    post: { kind: 'event', type: 'targetCountingByLine', time: '2026-02-26T21:23:11.308Z', channel: 1, device: RECORDER_60 },
  },
  'nvr-v2/video-metadata.xml': { kind: 'event', post: { kind: 'event', type: 'videoMetadata', time: '2026-02-26T22:39:38.273Z', channel: 1, device: RECORDER_60 } },
};

function readCapture(name: string): Buffer {
  const file = join(CAPTURES, name);
  assert.ok(existsSync(file), `capture ${file} is missing: the captures are expected in ${CAPTURES}`);
  return readFileSync(file);
}

function only(posts: DevicePost[]): DevicePost {
  assert.equal(posts.length, 1, `expected one post, got ${JSON.stringify(posts)}`);
  return posts[0] as DevicePost;
}

/** Every key anywhere in a typed value. */
function keysOf(value: XmlValue, into: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => keysOf(v, into));
  else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      into.push(k);
      keysOf(v, into);
    }
  }
  return into;
}

function expectParseError(body: string): void {
  assert.throws(
    () => parseDevicePost(body, SENDER, RECEIVED_AT),
    (err: unknown) => err instanceof IpcamError && err.code === 'EPARSE',
  );
}

describe('device post parsing: real captures', () => {
  it('finds the capture folder, and every capture in it has an expected result', () => {
    assert.ok(existsSync(CAPTURES), `the captures folder ${CAPTURES} is missing`);
    const files = readdirSync(CAPTURES, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => readdirSync(join(CAPTURES, d.name)).filter((f) => f.endsWith('.xml')).map((f) => `${d.name}/${f}`))
      .sort();
    assert.ok(files.length >= 18, `expected the 18 captures, found ${files.length}`);
    assert.deepEqual(files, Object.keys(EXPECTED).sort(), 'captures and expectations differ: a new capture needs an expected result here');
  });

  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: ${expected.kind}${expected.kind === 'event' ? ` ${expected.post.type}` : ''}`, () => {
      const post = only(parseDevicePost(readCapture(name), SENDER, RECEIVED_AT));
      if (expected.kind !== 'event') {
        assert.deepEqual(post, expected.post);
        return;
      }
      assert.equal(post.kind, 'event');
      const { data, ...rest } = post as OtherEvent;
      assert.deepEqual(rest, expected.post);
      assert.ok(typeof data === 'object' && !Array.isArray(data), 'event data is the document as an object');
      assert.equal((data as Record<string, XmlValue>)['smartType'], expected.post.type);
      const keys = keysOf(data);
      assert.ok(keys.includes('sourceDataInfo'), 'the event data keeps the document structure');
      assert.deepEqual(
        keys.filter((k) => k.endsWith('Base64Data')),
        [],
        'image data is dropped from event data',
      );
    });
  }

  it('keep-alives are keep-alives whatever the sender puts around them (no plate, no event)', () => {
    for (const name of ['ipc-v1x/keepalive.xml', 'nvr-v2/keepalive.xml']) {
      const posts = parseDevicePost(readCapture(name), SENDER, RECEIVED_AT);
      assert.deepEqual(
        posts.map((p) => p.kind),
        ['keepalive'],
        name,
      );
    }
  });

  it('the placeholders of the captures decode to no image', () => {
    for (const name of ['ipc-v1x/lpr.xml', 'nvr-v2/vehicle-lpr.xml']) {
      const post = only(parseDevicePost(readCapture(name), SENDER, RECEIVED_AT)) as PlateDetection;
      assert.ok(post.images.plate, `${name}: the plate image text is passed on`);
      assert.equal(decodeImage(post.images.plate), undefined);
      assert.equal(decodeImage(post.images.scene), undefined);
    }
  });
});

describe('device post parsing: simulator documents', () => {
  const NON_ASCII = 'ÄÖ-中 123';
  const full: PlateEventSpec = {
    plate: NON_ASCII,
    listType: 'blackList',
    direction: 'approach',
    confidence: 99,
    channel: 3,
    vehicle: { color: 'red', type: 'sedan', brand: 'Ford', model: 'Focus' },
    time: Date.UTC(2025, 5, 7, 8, 9, 10, 123),
    device: { name: 'Gate cam', mac: '58:5b:69:aa:bb:cc', sn: 'SN-42', ip: '192.168.7.8' },
  };
  const fullTime = '2025-06-07T08:09:10.123Z';

  it('camera format (config 1.7, newer-camera fields) parses back to what was put in, images included', () => {
    const doc = buildPlateEvent('ipc', full);
    assert.match(doc, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<config version="1.7" xmlns="http:\/\/www.ipc.com\/ver10">/);
    assert.match(doc, /<smartType type="openAlramObj">VEHICE<\/smartType>/);
    assert.match(doc, /<PlateConfidence count="9900"\/>/);
    assert.match(doc, /<currentTime type="tint64">\d{16}<\/currentTime>/);
    assert.match(doc, /<targetBase64Data type="string"><!\[CDATA\[\/9j\//, 'camera images are CDATA');
    const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT));
    const expected: PlateDetection = {
      kind: 'plate',
      plate: NON_ASCII,
      listType: 'blackList',
      direction: 'approach',
      confidence: 99,
      channel: 3,
      time: fullTime,
      // A camera names itself by name, mac and sn; its address is the sender's.
      device: { name: 'Gate cam', mac: '58:5b:69:aa:bb:cc', sn: 'SN-42', ip: SENDER },
      vehicle: { color: 'red', type: 'sedan', brand: 'Ford', model: 'Focus' },
      images: { plate: PLATE_B64, scene: SCENE_B64 },
    };
    assert.deepEqual(post, expected);
    assert.deepEqual(decodeImage((post as PlateDetection).images.plate), PLATE_JPEG);
    assert.deepEqual(decodeImage((post as PlateDetection).images.scene), SNAPSHOT_JPEG);
  });

  it('recorder format (config 2.0.0, alarmData, plain base64) parses back to what was put in, images included', () => {
    const doc = buildPlateEvent('nvr', full);
    assert.match(doc, /<config version="2.0.0" xmlns="http:\/\/www.ipc.com\/ver10"><messageType>alarmData<\/messageType>/);
    assert.match(doc, /<smartType>vehicle<\/smartType>/);
    assert.match(doc, /<licensePlateListInfo><item>[\s\S]*<licensePlateAttribute><licensePlateNumber><!\[CDATA\[ÄÖ-中 123\]\]><\/licensePlateNumber>/);
    assert.match(doc, /<targetBase64Data>\/9j\/[A-Za-z0-9+/=]+<\/targetBase64Data>/, 'recorder images are plain text');
    assert.match(doc, /<sourceBase64Data>\/9j\/[A-Za-z0-9+/=]+<\/sourceBase64Data>/);
    assert.doesNotMatch(doc, /CDATA\[\/9j/);
    assert.doesNotMatch(doc, /vehicleListType|type="/, 'recorders send no list type and no type attributes');
    assert.match(doc, /<licensePlateMatchInfo><groupName><!\[CDATA\[Blacklist\]\]><\/groupName><\/licensePlateMatchInfo>/);
    const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT));
    const expected: PlateDetection = {
      kind: 'plate',
      plate: NON_ASCII,
      listType: 'blackList',
      // Filed in the group of that name, as recorders do, without vehicleListType.
      group: 'Blacklist',
      direction: 'approach',
      confidence: 99,
      channel: 3,
      time: fullTime,
      device: { name: 'Gate cam', mac: '58:5b:69:aa:bb:cc', ip: '192.168.7.8' },
      vehicle: { color: 'red', type: 'sedan', brand: 'Ford', model: 'Focus' },
      images: { plate: PLATE_B64, scene: SCENE_B64 },
    };
    assert.deepEqual(post, expected);
    assert.deepEqual(decodeImage((post as PlateDetection).images.plate), PLATE_JPEG);
    assert.deepEqual(decodeImage((post as PlateDetection).images.scene), SNAPSHOT_JPEG);
  });

  for (const format of ['ipc', 'nvr'] as EventFormat[]) {
    it(`${format}: every list type round-trips; unknown is left out of the document and reads as unknown`, () => {
      for (const listType of ['whiteList', 'blackList', 'temporaryList', 'strangerList', 'unknown'] as const) {
        const doc = buildPlateEvent(format, { plate: 'LT1', listType, images: false });
        // A camera names the list; a recorder files the plate in a group named after it.
        const named = format === 'ipc' ? /vehicleListType/ : /groupName/;
        assert.equal(named.test(doc), listType !== 'unknown', `${listType}: ${doc}`);
        if (format === 'nvr') assert.doesNotMatch(doc, /vehicleListType/);
        const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT)) as PlateDetection;
        assert.equal(post.listType, listType);
      }
      const absent = only(parseDevicePost(buildPlateEvent(format, { plate: 'LT2', images: false }), SENDER, RECEIVED_AT)) as PlateDetection;
      assert.equal(absent.listType, 'unknown');
    });

    it(`${format}: a caller's scene picture is posted as given`, () => {
      const scene = Buffer.concat([SNAPSHOT_JPEG.subarray(0, 2), Buffer.from([0xff, 0xfe, 0x00, 0x06]), Buffer.from('abcd'), SNAPSHOT_JPEG.subarray(2)]);
      const post = only(parseDevicePost(buildPlateEvent(format, { plate: 'SC1', scene }), SENDER, RECEIVED_AT)) as PlateDetection;
      assert.deepEqual(decodeImage(post.images.scene), scene);
      assert.deepEqual(decodeImage(post.images.plate), PLATE_JPEG);
    });

    it(`${format}: without images there are no image fields`, () => {
      const doc = buildPlateEvent(format, { plate: 'NI1', images: false });
      assert.doesNotMatch(doc, /Base64Data/);
      const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT)) as PlateDetection;
      assert.deepEqual(post.images, {});
      assert.ok(Buffer.byteLength(doc) < 2048, `a post without images is small, got ${Buffer.byteLength(doc)} bytes`);
    });
  }

  it('camera: VEHICE and VEHICLE are both plates; an old camera (no identity fields) is named by its sender', () => {
    for (const smartType of ['VEHICE', 'VEHICLE'] as const) {
      const doc = buildPlateEvent('ipc', { plate: 'OLD1', smartType, extended: false, direction: 'away', confidence: 50, images: false, time: full.time as number });
      assert.ok(doc.includes(`>${smartType}</smartType>`));
      assert.doesNotMatch(doc, /<mac|<sn|<deviceName|vehicleDirect|PlateConfidence/);
      const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT));
      assert.deepEqual(post, { kind: 'plate', plate: 'OLD1', listType: 'unknown', time: fullTime, device: { ip: SENDER }, images: {} });
    }
  });

  it('confidence: count="9900" is 99 %, count="8750" 87.5 %', () => {
    for (const format of ['ipc', 'nvr'] as EventFormat[]) {
      for (const [confidence, count] of [
        [99, '9900'],
        [87.5, '8750'],
      ] as const) {
        const doc = buildPlateEvent(format, { plate: 'C1', confidence, images: false });
        assert.ok(doc.includes(`<PlateConfidence count="${count}"/>`), doc);
        assert.equal((only(parseDevicePost(doc, SENDER, RECEIVED_AT)) as PlateDetection).confidence, confidence);
      }
    }
    const handWritten =
      '<config version="1.7" xmlns="http://www.ipc.com/ver10"><smartType>VEHICLE</smartType><listInfo type="list" count="1"><item>' +
      '<plateNumber type="string"><![CDATA[HW1]]></plateNumber><PlateConfidence count="9900"></PlateConfidence></item></listInfo></config>';
    assert.equal((only(parseDevicePost(handWritten, SENDER, RECEIVED_AT)) as PlateDetection).confidence, 99);
  });

  it('time: 16-digit (us), 13-digit (ms) and 10-digit (s) epochs all read as the same instant', () => {
    const time = Date.UTC(2024, 1, 29, 23, 59, 58, 765);
    for (const format of ['ipc', 'nvr'] as EventFormat[]) {
      for (const [epoch, digits, iso] of [
        ['us', 16, '2024-02-29T23:59:58.765Z'],
        ['ms', 13, '2024-02-29T23:59:58.765Z'],
        ['s', 10, '2024-02-29T23:59:58.000Z'],
      ] as const) {
        const doc = buildPlateEvent(format, { plate: 'T1', time, epoch, images: false });
        const raw = /<currentTime[^>]*>(\d+)<\/currentTime>/.exec(doc)?.[1];
        assert.equal(raw?.length, digits, `${format} ${epoch}: ${raw}`);
        assert.equal(only(parseDevicePost(doc, SENDER, RECEIVED_AT)).time, iso, `${format} ${epoch}`);
      }
    }
  });

  it('keep-alives of both formats carry the identity and take the time of receipt', () => {
    const device = { name: 'Yard', mac: '58:5b:69:01:02:03', sn: 'SN-7', ip: '192.168.9.9' };
    const camera = buildKeepAlive('ipc', { device });
    assert.match(camera, /^<\?xml[^>]*\?>\n<DeviceInfo>/);
    assert.deepEqual(only(parseDevicePost(camera, SENDER, RECEIVED_AT)), { kind: 'keepalive', time: RECEIVED_ISO, device });
    const recorder = buildKeepAlive('nvr', { device });
    assert.match(recorder, /<messageType>keepalive<\/messageType>/);
    assert.deepEqual(only(parseDevicePost(recorder, SENDER, RECEIVED_AT)), {
      kind: 'keepalive',
      time: RECEIVED_ISO,
      device: { name: 'Yard', mac: '58:5b:69:01:02:03', ip: '192.168.9.9' },
    });
  });

  it('camera alarm status: dataTime "MM-DD-YYYY hh:mm:ss AM" (12-hour clock) reads back as that local time', () => {
    const device = { name: 'Yard', mac: '58:5b:69:01:02:03', sn: 'SN-7', ip: '192.168.9.9' };
    for (const [date, text] of [
      [new Date(2025, 0, 2, 0, 5, 6), '01-02-2025 12:05:06 AM'],
      [new Date(2025, 10, 19, 12, 15, 11), '11-19-2025 12:15:11 PM'],
      [new Date(2025, 11, 31, 23, 59, 59), '12-31-2025 11:59:59 PM'],
      [new Date(2025, 6, 4, 9, 0, 1), '07-04-2025 09:00:01 AM'],
    ] as const) {
      assert.equal(formatDataTime(date.getTime()), text);
      const doc = buildAlarmStatus('ipc', { device, time: date.getTime() + 456, alarm: 'vehiceAlarm', active: false });
      assert.ok(doc.includes(`<dataTime><![CDATA[${text}]]></dataTime>`), doc);
      const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT));
      assert.deepEqual(post, { kind: 'alarmStatus', time: date.toISOString(), device, alarms: [{ type: 'vehiceAlarm', id: 1, active: false }] });
    }
  });

  it('recorder alarm status: item id, state, channel and time', () => {
    const doc = buildAlarmStatus('nvr', { alarm: 'passlineAlarm', id: 2, active: true, channel: 4, time: Date.UTC(2026, 1, 25, 22, 1, 54), device: { name: 'N', ip: '10.1.1.1', mac: 'm' } });
    assert.match(doc, /<messageType>alarmStatus<\/messageType>/);
    assert.match(doc, /<passlineAlarm><item id="2">true<\/item><\/passlineAlarm>/);
    assert.deepEqual(only(parseDevicePost(doc, SENDER, RECEIVED_AT)), {
      kind: 'alarmStatus',
      time: '2026-02-25T22:01:54.000Z',
      channel: 4,
      device: { name: 'N', ip: '10.1.1.1', mac: 'm' },
      alarms: [{ type: 'passlineAlarm', id: 2, active: true }],
    });
  });

  it('raw base64 text between the XML declaration and the root is skipped', () => {
    for (const format of ['ipc', 'nvr'] as EventFormat[]) {
      const doc = buildPlateEvent(format, full);
      const clean = parseDevicePost(doc, SENDER, RECEIVED_AT);
      const declaration = '<?xml version="1.0" encoding="UTF-8"?>';
      assert.ok(doc.startsWith(declaration));
      const noisy = `${declaration}\r\n${SCENE_B64.slice(0, 4000)}\r\n${doc.slice(declaration.length)}`;
      assert.deepEqual(parseDevicePost(noisy, SENDER, RECEIVED_AT), clean);
      assert.deepEqual(parseDevicePost(Buffer.from(noisy, 'utf8'), SENDER, RECEIVED_AT), clean, 'as a Buffer too');
    }
  });

  it('a post without XML declaration (or with a byte order mark) reads the same', () => {
    for (const format of ['ipc', 'nvr'] as EventFormat[]) {
      const doc = buildPlateEvent(format, full);
      const clean = parseDevicePost(doc, SENDER, RECEIVED_AT);
      const bare = doc.replace(/^<\?xml[^>]*\?>\s*/, '');
      assert.ok(bare.startsWith('<config'));
      assert.deepEqual(parseDevicePost(bare, SENDER, RECEIVED_AT), clean);
      assert.deepEqual(parseDevicePost(`\uFEFF${doc}`, SENDER, RECEIVED_AT), clean);
    }
  });

  it('pictures: a post naming no image element has none; an image element left in the XML (a closing tag with a space) is read from the XML as before', () => {
    const plain = only(parseDevicePost(buildPlateEvent('ipc', { plate: 'NOIMG', images: false }), SENDER, RECEIVED_AT)) as PlateDetection;
    assert.deepEqual(plain.images, {});
    // 'Base64Data' in a text only: no element of that name, no picture.
    const mention = buildPlateEvent('ipc', { plate: 'MENTION', images: false }).replace('<plateNumber', '<note>targetBase64Data</note><plateNumber');
    assert.deepEqual((only(parseDevicePost(mention, SENDER, RECEIVED_AT)) as PlateDetection).images, {});
    // `</targetBase64Data >` is a closing tag XML allows that the image cut does not look for: the
    // element stays in the XML and its text is the picture, as the cut would have given it.
    const spaced = buildPlateEvent('ipc', { plate: 'SPACED', images: false }).replace('</plateNumber>', `</plateNumber><targetImageData><targetBase64Data>${PLATE_B64}</targetBase64Data ></targetImageData>`);
    assert.equal(extractImages(spaced).blobs.length, 0);
    assert.equal((only(parseDevicePost(spaced, SENDER, RECEIVED_AT)) as PlateDetection).images.plate, PLATE_B64);
  });

  it('an empty, self-closed image element does not swallow the elements after it', () => {
    const doc =
      '<config version="1.7" xmlns="http://www.ipc.com/ver10"><smartType>VEHICLE</smartType><listInfo type="list" count="2">' +
      '<item><targetImageData><targetBase64Data type="string"/></targetImageData></item>' +
      `<item><plateNumber type="string"><![CDATA[SELF1]]></plateNumber><vehicleListType type="string">whiteList</vehicleListType>` +
      `<targetImageData><targetBase64Data type="string"><![CDATA[${PLATE_B64}]]></targetBase64Data></targetImageData></item></listInfo></config>`;
    const post = only(parseDevicePost(doc, SENDER, RECEIVED_AT)) as PlateDetection;
    assert.equal(post.plate, 'SELF1');
    assert.equal(post.listType, 'whiteList');
    assert.deepEqual(post.images, { plate: PLATE_B64 });
  });

  it('a camera post with several plates gives one detection each; the overview item is the scene', () => {
    const doc =
      '<config version="1.7" xmlns="http://www.ipc.com/ver10"><smartType>VEHICLE</smartType><currentTime>1700000000</currentTime><listInfo type="list" count="3">' +
      `<item><targetImageData><targetBase64Data><![CDATA[${SCENE_B64}]]></targetBase64Data></targetImageData></item>` +
      '<item><plateNumber><![CDATA[M1]]></plateNumber><vehicleListType>whiteList</vehicleListType></item>' +
      '<item><plateNumber><![CDATA[M2]]></plateNumber></item></listInfo></config>';
    const posts = parseDevicePost(doc, SENDER, RECEIVED_AT) as PlateDetection[];
    assert.deepEqual(
      posts.map((p) => [p.plate, p.listType, p.time, decodeImage(p.images.scene)?.length]),
      [
        ['M1', 'whiteList', '2023-11-14T22:13:20.000Z', SNAPSHOT_JPEG.length],
        ['M2', 'unknown', '2023-11-14T22:13:20.000Z', SNAPSHOT_JPEG.length],
      ],
    );
  });

  it('unreadable posts are EPARSE', () => {
    expectParseError('just text, no XML');
    expectParseError('<config version="1.7"><smartType>VEHICE</smartType>');
    expectParseError('<config><other>1</other></config>');
    expectParseError('<?xml version="1.0"');
  });
});

// ---------------------------------------------------------------------------------------------
// Bounded work: a hostile or broken post costs time linear in its size, and at most a bounded amount

function recorderPlates(count: number): string {
  const items: string[] = [];
  for (let i = 0; i < count; i++) items.push(`<item><licensePlateAttribute><licensePlateNumber><![CDATA[R${i}]]></licensePlateNumber></licensePlateAttribute></item>`);
  return `<config version="2.0.0" xmlns="http://www.ipc.com/ver10"><messageType>alarmData</messageType><smartType>vehicle</smartType><licensePlateListInfo>${items.join('')}</licensePlateListInfo></config>`;
}

function expectTooComplex(call: () => unknown, message: RegExp): void {
  assert.throws(call, (err: unknown) => {
    assert.ok(err instanceof PostTooComplex, `expected PostTooComplex, got ${String(err)}`);
    assert.equal(err.code, 'EPARSE');
    assert.match(err.message, message);
    return true;
  });
}

describe('device post parsing: bounded work', () => {
  it('a 60,000-item camera post parses, limits lifted: the size only a linear parse gets through', function () {
    // A parse that looked for each plate's missing fields (carAttr, PlateConfidence) in the whole
    // document, as it once did, walks 180,000 elements twice for each of 60,000 plates: at 3.5 ms
    // a walk, about seven minutes. The linear parse takes under a second; 30 s is the contract bound.
    // What it costs per byte against 1,000 items is printed by `npm run bench xml`.
    this.timeout(30_000);
    const posts = parseDevicePost(cameraPlates(60_000), SENDER, RECEIVED_AT, UNBOUNDED);
    assert.equal(posts.length, 60_000);
    assert.deepEqual([(posts[0] as PlateDetection).plate, (posts[59_999] as PlateDetection).plate], ['P0', 'P59999']);
  });

  it('at the default limits the 20,000-item post is refused before any XML parsing (neither our scan nor fast-xml-parser sees it)', function () {
    this.timeout(60_000);
    const large = cameraPlates(20_000);
    // Spies count calls and call through: the scan and the parser do what they always do.
    const scan = sinon.spy(wellFormed, 'checkWellFormed');
    const parse = sinon.spy(XMLParser.prototype, 'parse');
    try {
      expectTooComplex(() => parseDevicePost(large, SENDER, RECEIVED_AT), /characters of XML besides the images/);
      assert.equal(scan.callCount, 0, 'the well-formedness scan was run on a refused post');
      assert.equal(parse.callCount, 0, 'fast-xml-parser was run on a refused post');
      // The same spies see a post within the limits parsed: they would have seen the large one.
      parseDevicePost(cameraPlates(10), SENDER, RECEIVED_AT);
      assert.equal(scan.callCount, 1);
      assert.equal(parse.callCount, 1);
    } finally {
      scan.restore();
      parse.restore();
    }
  });

  it('more elements, attributes or character references than maxNodes are refused; a post at the bound parses', () => {
    const { maxNodes } = PARSE_LIMITS;
    const head = '<config version="1.7"><smartType>PEA</smartType>';
    // 4 nodes in the head (config, its attribute, smartType) + 1 per element below.
    const elements = (n: number): string => `${head}<list>${'<i/>'.repeat(n)}</list></config>`;
    expectTooComplex(() => parseDevicePost(elements(maxNodes), SENDER, RECEIVED_AT), new RegExp(`more than ${maxNodes} elements`));
    const atBound = parseDevicePost(elements(maxNodes - 4), SENDER, RECEIVED_AT);
    assert.equal(atBound[0]?.kind, 'event');
    const attributes = `${head}<a ${Array.from({ length: maxNodes }, (_, i) => `x${i}="1"`).join(' ')}/></config>`;
    expectTooComplex(() => parseDevicePost(attributes, SENDER, RECEIVED_AT), /attributes/);
    const references = `${head}<a>${'&#228;'.repeat(maxNodes)}</a></config>`;
    expectTooComplex(() => parseDevicePost(references, SENDER, RECEIVED_AT), /references/);
    // Image data does not count: a post with a real picture is far below the bound.
    assert.equal(parseDevicePost(buildPlateEvent('ipc', { plate: 'IMG1' }), SENDER, RECEIVED_AT).length, 1);
  });

  it('maxNodes holds for a post whose XML is little longer than the bound: refused at one below its count, read at its count and above', () => {
    // 6 nodes (config, version, smartType, a, x, &amp;) in 76 characters: only a bound below the
    // length makes the count be taken, a bound at or above it cannot be passed.
    const doc = '<config version="1.7"><smartType>PEA</smartType><a x="1">&amp;</a></config>';
    for (const maxNodes of [5, 3, 1]) expectTooComplex(() => readDevicePost(doc, SENDER, RECEIVED_AT, { maxNodes }), new RegExp(`more than ${maxNodes} elements`));
    for (const maxNodes of [6, 7, 75, doc.length, doc.length + 1]) assert.equal(readDevicePost(doc, SENDER, RECEIVED_AT, { maxNodes }).posts[0]?.kind, 'event', String(maxNodes));
    // Marks only, one character each: the count equals the length.
    const dense = `<config version="1.7"><smartType>PEA</smartType><a>${'&#1;'.repeat(10)}</a></config>`;
    const count = 3 + 1 + 10;
    expectTooComplex(() => readDevicePost(dense, SENDER, RECEIVED_AT, { maxNodes: count - 1 }), /references/);
    assert.equal(readDevicePost(dense, SENDER, RECEIVED_AT, { maxNodes: count }).posts.length, 1);
  });

  it('the XML besides the images is capped (maxMarkup); image data of any size is not part of it', () => {
    const text = (n: number): string => `<config version="1.7"><smartType>PEA</smartType><a>${'x'.repeat(n)}</a></config>`;
    expectTooComplex(() => parseDevicePost(text(PARSE_LIMITS.maxMarkup), SENDER, RECEIVED_AT), /characters of XML/);
    const scene = Buffer.concat([SNAPSHOT_JPEG, Buffer.alloc(PARSE_LIMITS.maxMarkup)]);
    const [post] = parseDevicePost(buildPlateEvent('ipc', { plate: 'BIGIMG', scene }), SENDER, RECEIVED_AT) as PlateDetection[];
    assert.equal(post?.images.scene?.length, scene.toString('base64').length);
  });

  for (const [format, build] of [
    ['camera', (n: number) => cameraPlates(n)],
    ['recorder', recorderPlates],
  ] as const) {
    it(`${format}: plates beyond maxItems are ignored and counted; the first ones are read in order`, () => {
      const { maxItems } = PARSE_LIMITS;
      const read = readDevicePost(build(maxItems + 7), SENDER, RECEIVED_AT);
      assert.equal(read.posts.length, maxItems);
      assert.equal(read.ignoredItems, 7);
      const plates = read.posts.map((p) => (p as PlateDetection).plate);
      assert.equal(plates[0], format === 'camera' ? 'P0' : 'R0');
      assert.equal(plates[maxItems - 1], format === 'camera' ? `P${maxItems - 1}` : `R${maxItems - 1}`);
      const exact = readDevicePost(build(maxItems), SENDER, RECEIVED_AT);
      assert.deepEqual([exact.posts.length, exact.ignoredItems], [maxItems, 0]);
      const lower = readDevicePost(build(10), SENDER, RECEIVED_AT, { maxItems: 3 });
      assert.deepEqual([lower.posts.length, lower.ignoredItems], [3, 7]);
    });
  }

  it("camera: a field a plate item lacks comes from the rest of the document (overview included), never from another plate", () => {
    const doc = (overview: string, plates: string[]): string =>
      '<config version="1.7"><smartType>VEHICLE</smartType><listInfo type="list">' +
      `<item>${overview}</item>` +
      plates.map((p) => `<item><plateNumber>${p}</plateNumber></item>`).join('') +
      '</listInfo></config>';
    const fromOverview = parseDevicePost(doc('<carAttr><color>red</color></carAttr><PlateConfidence count="9100"/>', ['F1', 'F2']), SENDER, RECEIVED_AT) as PlateDetection[];
    assert.deepEqual(
      fromOverview.map((p) => [p.plate, p.vehicle, p.confidence]),
      [
        ['F1', { color: 'red' }, 91],
        ['F2', { color: 'red' }, 91],
      ],
    );
    const own =
      '<config version="1.7"><smartType>VEHICLE</smartType><listInfo type="list">' +
      '<item><plateNumber>O1</plateNumber><carAttr><color>blue</color></carAttr><PlateConfidence count="9900"/></item>' +
      '<item><plateNumber>O2</plateNumber></item></listInfo><carAttr><color>grey</color></carAttr></config>';
    assert.deepEqual(
      (parseDevicePost(own, SENDER, RECEIVED_AT) as PlateDetection[]).map((p) => [p.plate, p.vehicle, p.confidence]),
      [
        ['O1', { color: 'blue' }, 99],
        ['O2', { color: 'grey' }, undefined],
      ],
    );
  });

  it('1,000,000 image tags that never end (a truncated or hostile post, 19 MB) are refused, limits lifted', function () {
    // No `>` after the first opener. A search for the end of each tag that ran to the end of the
    // text every time reads 10^13 characters: minutes even for the native search, and the
    // expression this parse once used took 1.7 s for 8,000 such tags (quadratic: hours for these).
    // The one pass takes tens of milliseconds; 30 s is the contract bound.
    this.timeout(30_000);
    assert.throws(() => parseDevicePost(endlessImageTags(1_000_000), SENDER, RECEIVED_AT, UNBOUNDED), (err: unknown) => err instanceof IpcamError && err.code === 'EPARSE');
  });
});

/** The image cut as it was (commit edaa02d): the expression tried at every tag. */
function extractImagesBefore(text: string): { xmlText: string; blobs: string[] } {
  const IMAGE_NAME = /<(\w*Base64Data)(?=[\s>/])/g;
  const unwrap = (content: string): string => {
    const trimmed = content.trim();
    return trimmed.startsWith('<![CDATA[') && trimmed.endsWith(']]>') ? trimmed.slice(9, -3).trim() : trimmed;
  };
  const blobs: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  for (let m = IMAGE_NAME.exec(text); m; m = IMAGE_NAME.exec(text)) {
    const tagEnd = text.indexOf('>', IMAGE_NAME.lastIndex);
    if (tagEnd < 0) break;
    IMAGE_NAME.lastIndex = tagEnd + 1;
    if (text.charCodeAt(tagEnd - 1) === 0x2f) continue;
    const start = tagEnd + 1;
    const end = text.indexOf(`</${m[1] as string}>`, start);
    if (end < 0) break;
    blobs.push(unwrap(text.slice(start, end)));
    parts.push(text.slice(copied, start), `@ipcam-blob:${blobs.length - 1}`);
    copied = end;
    IMAGE_NAME.lastIndex = end;
  }
  if (blobs.length === 0) return { xmlText: text, blobs };
  parts.push(text.slice(copied));
  return { xmlText: parts.join(''), blobs };
}

describe('device post parsing: the image cut finds the image elements the expression before it found', () => {
  it('every capture, simulator posts with pictures, and 20,000 generated and mutated texts', () => {
    const texts: string[] = [];
    for (const dir of readdirSync(CAPTURES, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      for (const file of readdirSync(join(CAPTURES, dir.name)).filter((f) => f.endsWith('.xml'))) texts.push(readFileSync(join(CAPTURES, dir.name, file), 'utf8'));
    }
    texts.push(buildPlateEvent('ipc', { plate: 'IMG1' }), buildPlateEvent('nvr', { plate: 'IMG2' }));
    let seed = 20_261_126;
    const next = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const names = ['targetBase64Data', 'sourceBase64Data', 'Base64Data', 'xBase64DataBase64Data', 'Base64DataX', 'a_1Base64Data', 'Base64Dat', 'x-Base64Data'];
    const after = [' ', '>', '/', '\t', '\u00a0', '\u2028', '\ufeff', 'x', '-', ''];
    for (let i = 0; i < 20_000; i++) {
      let text = '';
      for (let j = Math.floor(next() * 5); j >= 0; j--) {
        const name = pick(names);
        const r = next();
        text += r < 0.15 ? `<${name}/>` : r < 0.3 ? pick(['<a>', '</a>', 'text', '<', '>', ' ', 'Base64Data', '<x']) : `<${name}${pick(after)}${pick(['', ' type="string"', '/'])}>${pick(['', ' <![CDATA[ /9j/AB ]]> ', 'AAAA', '<b/>'])}${next() < 0.8 ? `</${name}>` : ''}`;
      }
      texts.push(text);
    }
    for (const text of texts) assert.deepStrictEqual(extractImages(text), extractImagesBefore(text), JSON.stringify(text.slice(0, 300)));
  });
});

/** What a read gives: the posts, or the error's code and message. */
function outcome(body: Buffer | string): unknown {
  try {
    return readDevicePost(body, SENDER, RECEIVED_AT);
  } catch (err) {
    return { code: (err as IpcamError).code, message: (err as Error).message };
  }
}

describe('device post parsing: a body read from its bytes as from its text', () => {
  it('byte order marks, declarations, text before the root, broken UTF-8 and blank posts: same posts or same error, over 5,000 generated bodies', () => {
    const next = prng(20_261_127);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const root = buildPlateEvent('ipc', { plate: 'ÄÖ 12', images: false }).replace(/^<\?xml[^>]*\?>\s*/, '');
    const before: Buffer[] = [
      Buffer.alloc(0),
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from([0xef, 0xbb]),
      Buffer.from('<?xml version="1.0" encoding="UTF-8"?>'),
      Buffer.from('<?xml version="1.0"'),
      Buffer.from('<?xm'),
      Buffer.from('\r\n  \t'),
      Buffer.from('\u00a0\u2028\ufeff'),
      Buffer.from(SCENE_B64.slice(0, 40)),
      Buffer.from([0xe2, 0x82]),
      Buffer.from([0xc3]),
      Buffer.from([0xff, 0xfe]),
      Buffer.from([0xf0, 0x9f, 0x98]),
      Buffer.from('?>'),
      Buffer.from('é'),
    ];
    const after = [Buffer.from(root), Buffer.from(root.slice(0, 40)), Buffer.alloc(0), Buffer.from(' '), Buffer.from('<'), Buffer.from('<keepalive/>'), Buffer.from([0xe2, 0x3c]), Buffer.from('no element')];
    let differentText = 0;
    for (let i = 0; i < 5_000; i++) {
      const parts: Buffer[] = [];
      for (let j = Math.floor(next() * 4); j >= 0; j--) parts.push(pick(before));
      parts.push(pick(after));
      const body = Buffer.concat(parts);
      const text = body.toString('utf8');
      if (Buffer.compare(Buffer.from(text, 'utf8'), body) !== 0) differentText++;
      assert.deepStrictEqual(outcome(body), outcome(text), JSON.stringify(text.slice(0, 200)));
    }
    // Both kinds were met: bodies that are not UTF-8, and bodies that are.
    assert.ok(differentText > 500 && differentText < 4_500, String(differentText));
    for (const file of ['ipc-v1x/lpr.xml', 'nvr-v2/vehicle-lpr.xml', 'ipc-v1x/keepalive.xml']) {
      const body = readCapture(file);
      assert.deepStrictEqual(outcome(body), outcome(body.toString('utf8')), file);
    }
  });
});

describe('decodeImage', () => {
  it('returns the JPEG for real base64 (wrapped in lines too)', () => {
    assert.deepEqual(decodeImage(PLATE_B64), PLATE_JPEG);
    assert.deepEqual(decodeImage(SCENE_B64), SNAPSHOT_JPEG);
    const wrapped = (SCENE_B64.match(/.{1,76}/g) ?? []).join('\r\n');
    assert.deepEqual(decodeImage(wrapped), SNAPSHOT_JPEG);
  });

  it('returns undefined for placeholders, empty text and base64 of something that is not an image', () => {
    for (const text of ['BASE64_JPEG_PLATE_CROP', 'BASE64_JPEG_OVERVIEW_IMAGE', '', undefined, Buffer.from('plain text, not a picture').toString('base64'), '/9j/']) {
      assert.equal(decodeImage(text), undefined, String(text));
    }
  });
});

/** A PNG's signature and IHDR chunk: what the check reads of a PNG. */
const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452000000100000001008060000001ff3ff61', 'hex');

/** How posted base64 was read before it was passed on: checked with a regular expression, decoded, its bytes looked at. */
function decodedAsBefore(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/=\s]+$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  const jpeg = bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  const png = bytes.length > 8 && bytes.subarray(0, 8).equals(PNG_HEAD.subarray(0, 8));
  return jpeg || png ? bytes : undefined;
}

describe('imageBase64', () => {
  it('passes real base64 on as it is, the same text decoding and encoding gave', () => {
    for (const image of [PLATE_JPEG, SNAPSHOT_JPEG, Buffer.concat([PNG_HEAD, Buffer.alloc(100, 7)])]) {
      const text = image.toString('base64');
      assert.equal(imageBase64(text), text);
      assert.equal(imageBase64(text), decodeImage(text)?.toString('base64'));
    }
  });

  it('takes out line breaks and spaces, adds missing padding and clears unused bits: the text decoding and encoding gives', () => {
    const canonical = SNAPSHOT_JPEG.toString('base64');
    const unpadded = Buffer.concat([SNAPSHOT_JPEG, Buffer.from([1])]).toString('base64');
    assert.ok(unpadded.endsWith('=='));
    const lastDigit = unpadded.at(-3) as string;
    const unusedBits = unpadded.slice(0, -3) + (lastDigit === 'E' ? 'F' : String.fromCharCode(lastDigit.charCodeAt(0) + 1)) + '==';
    for (const [label, text, expected] of [
      ['lines of 76, CRLF', (canonical.match(/.{1,76}/g) ?? []).join('\r\n'), canonical],
      ['lines of 64, LF, a trailing line break', `${(canonical.match(/.{1,64}/g) ?? []).join('\n')}\n`, canonical],
      ['spaces and tabs', canonical.replace(/(.{100})/g, '$1 \t'), canonical],
      ['no padding', unpadded.replace(/=+$/, ''), unpadded],
      ['unused bits set in the last digit', unusedBits, unpadded],
    ] as const) {
      assert.equal(imageBase64(text), expected, label);
      assert.equal(imageBase64(text), Buffer.from(text, 'base64').toString('base64'), label);
    }
  });

  it('leaves out anything that is not base64 of a JPEG or PNG picture', () => {
    const jpeg = PLATE_JPEG.toString('base64');
    const fakePng = Buffer.concat([PNG_HEAD.subarray(0, 4), Buffer.alloc(20, 1)]).toString('base64');
    for (const [label, text] of [
      ['placeholder', 'BASE64_JPEG_PLATE_CROP'],
      ['empty', ''],
      ['nothing', undefined],
      ['base64 of text', Buffer.from('plain text, not a picture at all').toString('base64')],
      ['only the JPEG signature', '/9j/'],
      ['a JPEG signature and 3 bytes', Buffer.from([0xff, 0xd8, 0xff]).toString('base64')],
      ['the first 4 bytes of a PNG signature only', fakePng],
      ['a character outside base64', `${jpeg.slice(0, 100)}!${jpeg.slice(101)}`],
      ['the URL alphabet', `${jpeg.slice(0, 100)}-_${jpeg.slice(102)}`],
      ['a letter beyond ASCII', `${jpeg.slice(0, 100)}é${jpeg.slice(101)}`],
      ['a data URL', `data:image/jpeg;base64,${jpeg}`],
    ] as const) {
      assert.equal(imageBase64(text), undefined, label);
      assert.equal(decodeImage(text), undefined, label);
    }
  });

  it('always gives what decoding as before and encoding again gave (a PNG needs its whole signature now): 5,000 random variants', () => {
    let seed = 77;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const images = [PLATE_JPEG, SNAPSHOT_JPEG, Buffer.concat([PNG_HEAD, Buffer.alloc(40, 9)]), Buffer.from('not a picture'), Buffer.from([0xff, 0xd8, 0xff, 0x00])];
    const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let i = 0; i < 5_000; i++) {
      const image = Buffer.concat([images[Math.floor(next() * images.length)] as Buffer, Buffer.alloc(Math.floor(next() * 3), 0x41)]);
      let text = image.toString('base64');
      const at = Math.floor(next() * text.length);
      const r = next();
      if (r < 0.15) text = text.replace(/=+$/, '');
      else if (r < 0.3) text = (text.match(/.{1,76}/g) ?? []).join(next() < 0.5 ? '\n' : '\r\n');
      else if (r < 0.45) text = text.slice(0, at) + ('!-_= \té'[Math.floor(next() * 8)] as string) + text.slice(at);
      else if (r < 0.6) text = text.slice(0, at) + (digits[Math.floor(next() * 64)] as string) + text.slice(at + 1);
      else if (r < 0.7) text = text.replace(/[A-Za-z0-9+/](=*)$/, (_, pad: string) => (digits[Math.floor(next() * 64)] as string) + pad);
      else if (r < 0.8) text = text.slice(0, at);
      assert.equal(imageBase64(text), decodedAsBefore(text)?.toString('base64'), JSON.stringify(text.slice(0, 60)));
      assert.deepEqual(decodeImage(text), decodedAsBefore(text), JSON.stringify(text.slice(0, 60)));
    }
  });

  it('checks a picture larger than the piece it decodes at a time, and finds a bad character in any piece', () => {
    const scene = Buffer.concat([SNAPSHOT_JPEG, Buffer.alloc(300_000, 0x33)]);
    const text = scene.toString('base64');
    assert.equal(imageBase64(text), text);
    for (const at of [10, 65_535, 65_536, 200_000, text.length - 3]) assert.equal(imageBase64(`${text.slice(0, at)}*${text.slice(at + 1)}`), undefined, `at ${at}`);
  });
});

describe('device post parsing: the envelope rules of the field notes', () => {
  const camera = (): string => readCapture('ipc-v1x/lpr.xml').toString('utf8');
  const recorder = (): string => readCapture('nvr-v2/vehicle-lpr.xml').toString('utf8');

  function plates(doc: string): string[] {
    return parseDevicePost(doc, SENDER, RECEIVED_AT).map((p) => (p.kind === 'plate' ? p.plate : `${p.kind}${p.kind === 'event' ? ` ${p.type}` : ''}`));
  }

  it('smartType is matched without regard to case (VEHICE, VEHICLE, vehicle, Vehicle in the camera capture)', () => {
    for (const type of ['VEHICE', 'VEHICLE', 'vehicle', 'Vehicle', 'vehice']) {
      const doc = camera().replace('>VEHICE</smartType>', `>${type}</smartType>`);
      assert.ok(doc.includes(`>${type}</smartType>`));
      assert.deepEqual(plates(doc), ['ABC1234'], type);
    }
  });

  it('a 2.x post without messageType uses the camera layout (listInfo/item/plateNumber)', () => {
    const doc = camera().replace('<config version="1.7"', '<config version="2.0.0"');
    assert.ok(doc.includes('<config version="2.0.0"') && !doc.includes('messageType'));
    assert.deepEqual(plates(doc), ['ABC1234']);
  });

  it('keep-alives: messageType matched without regard to case', () => {
    const doc = readCapture('nvr-v2/keepalive.xml').toString('utf8').replace(/<messageType>\s*keepalive\s*<\/messageType>/i, '<messageType>KeepAlive</messageType>');
    assert.ok(doc.includes('<messageType>KeepAlive</messageType>'));
    assert.deepEqual(plates(doc), ['keepalive']);
  });

  it('a capitalised VEHICLE in the new envelope is a plate when licensePlateListInfo is present', () => {
    const doc = recorder().replace('<smartType>vehicle</smartType>', '<smartType>VEHICLE</smartType>');
    assert.ok(doc.includes('<smartType>VEHICLE</smartType>'));
    assert.deepEqual(plates(doc), ['JP116D']);
  });

  it('a capitalised VEHICLE in the new envelope without licensePlateListInfo is an event, not a plate (even with a camera-layout listInfo)', () => {
    const head = recorder().replace('<smartType>vehicle</smartType>', '<smartType>VEHICLE</smartType>');
    const envelope = head.slice(0, head.indexOf('</currentTime>') + '</currentTime>'.length);
    assert.match(envelope, /<messageType>alarmData<\/messageType>/);
    const doc = `${envelope}\n    <listInfo><item><plateNumber><![CDATA[XYZ987]]></plateNumber></item></listInfo>\n</config>\n`;
    const [post] = parseDevicePost(doc, SENDER, RECEIVED_AT);
    assert.equal(post?.kind, 'event');
    assert.equal((post as OtherEvent).type, 'VEHICLE');
  });
});
