import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { decodeImage, imageBase64, isTrackingPost, parseDevicePost } from '../lib/events/parse';
import { IpcamError } from '../lib/errors/errors';
import type { Simulator } from '../lib/simulator';
import { buildPlateEvent, buildTrackingPost } from '../lib/simulator/events';
import { PLATE_JPEG, SNAPSHOT_JPEG } from '../lib/simulator/images';
import { DeviceClient } from '../lib/transport/client';
import { buildDocument, parseXml, xml, XML_PARSER_OPTIONS } from '../lib/xml/codec';
import { QUERY_PAGE } from '../lib/ops/plates';
import { jpegGrownTo } from '../test/helpers';
import { cameraPlates, endlessImageTags, HOSTILE_XML, UNBOUNDED } from '../test/hostile-xml';
import { PASSWORD, USER } from './measure';
import { decodeImageBefore, parseDevicePostBefore, parseXmlBefore, xmlTextBefore } from '../test/reference/xml-1556f4a';

/** Rounds per table; every case runs once in each round, the order reversed every other round. */
const ROUNDS = 31;
/** CPU time each case takes in one round (the calls per round are set from a first run). */
const ROUND_MS = 25;
const SCENE_BYTES = 480 * 1024;
const CAPTURE = join(__dirname, '..', '..', 'test', 'fixtures', 'captures', 'tvt-events', 'ipc-v1x', 'lpr.xml');

interface Case {
  name: string;
  run: () => unknown;
}

/** CPU time of this process (user + system, GC threads included), in microseconds. */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Calls per round so that one round of `run` takes about ROUND_MS of CPU time. */
function callsPerRound(run: () => unknown): number {
  for (let i = 0; i < 20; i++) run(); // warm-up: JIT
  let calls = 1;
  for (;;) {
    const start = cpuMicros();
    for (let i = 0; i < calls; i++) run();
    const micros = cpuMicros() - start;
    if (micros >= 2_000 || calls >= 1 << 20) return Math.max(1, Math.round((calls * ROUND_MS * 1000) / Math.max(micros, 1)));
    calls *= 4;
  }
}

/**
 * Microseconds of CPU time per call of each case, one entry per round. The cases of a round run
 * one after the other with the same number of calls, so that a ratio of two cases in one round
 * compares them under the same load; the order alternates so that neither always runs first.
 */
function measure(cases: Case[], rounds = ROUNDS): number[][] {
  const calls = Math.min(...cases.map((c) => callsPerRound(c.run)));
  const perCase = cases.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    const order = cases.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const { run } = cases[i] as Case;
      const start = cpuMicros();
      for (let k = 0; k < calls; k++) run();
      (perCase[i] as number[]).push((cpuMicros() - start) / calls);
    }
  }
  return perCase;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function spread(values: number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${(sorted[0] as number).toFixed(digits)}..${(sorted[sorted.length - 1] as number).toFixed(digits)}`;
}

/** Each case against each of `baselines` (indexes into `cases`): ratios taken round by round, median and min..max. */
function table(title: string, cases: Case[], baselines: Record<string, number>): void {
  const times = measure(cases);
  console.log(`\n${title}`);
  console.table(
    cases.map((c, i) => {
      const own = times[i] as number[];
      const row: Record<string, string> = { case: c.name, 'us/call': median(own).toFixed(1), 'us min..max': spread(own, 1) };
      for (const [label, b] of Object.entries(baselines)) {
        const ratios = own.map((t, r) => t / ((times[b] as number[])[r] as number));
        row[`x ${label}`] = median(ratios).toFixed(3);
        row[`x ${label} min..max`] = spread(ratios, 2);
      }
      return row;
    }),
  );
}

/** The answer the simulator gives to GetLicensePlates for one page of 100 plates, as received. */
async function platePage(sim: Simulator): Promise<Buffer> {
  const group = 'bench-xml';
  for (let i = 0; i < QUERY_PAGE; i++) sim.state.plates.add(`X${String(i).padStart(6, '0')}`, group);
  const client = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'basic' });
  try {
    const body = buildDocument('2.1.0', [xml.el('searchFilter', [xml.uint('maxResult', QUERY_PAGE), xml.uint('resultOffset', 1), xml.str('groupId', group)])]);
    const res = await client.request({ method: 'POST', path: '/GetLicensePlates', body, contentType: 'application/xml; charset=utf-8' });
    return res.body;
  } finally {
    await client.close();
  }
}

/** Base64 as some devices send it: lines of 76 characters. */
function wrapped(base64: string): string {
  return (base64.match(/.{1,76}/g) ?? []).join('\r\n');
}

/**
 * The XML codec against the parse path as it was (test/reference/xml-1556f4a.ts) and against a plain
 * fast-xml-parser parse of the same text, in the same run: a camera plate post of about 1 KB, a
 * real capture, a page of 100 plates; and plate images passed on as base64 against decoding and
 * encoding them again; and the cost per byte of hostile input, large against small.
 */
export async function xmlCodec(sim: Simulator): Promise<void> {
  const load = loadavg();
  console.log(`\n## XML codec and plate images (CPU time per call of this process; ${cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(' ')} at start)`);
  console.log('x before: against the parse path before issue 13 (fast-xml-parser validator + parser, conversion), same text, same run.');
  console.log('x plain: against new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse of the same XML text (images cut out as ours cuts them).');
  const plain = new XMLParser({ ignoreAttributes: false, parseTagValue: false });
  const parserAlone = new XMLParser(XML_PARSER_OPTIONS);

  const fields = { listType: 'whiteList', direction: 'approach', confidence: 98.5, vehicle: { color: 'white', type: 'sedan', brand: 'Toyota', model: 'Corolla' } } as const;
  const posts: Array<[string, Buffer]> = [
    ['camera plate post (simulator, no images)', Buffer.from(buildPlateEvent('ipc', { plate: 'ABC1234', ...fields, images: false }))],
    ['camera plate post (capture ipc-v1x/lpr.xml, images are placeholders)', readFileSync(CAPTURE)],
  ];
  for (const [name, body] of posts) {
    const text = xmlTextBefore(body);
    table(`### ${name}: ${body.length} bytes, ${text.length} characters of XML`, [
      { name: 'before: parseDevicePost', run: () => parseDevicePostBefore(body, '127.0.0.1', 0) },
      { name: 'plain fast-xml-parser, XML text', run: () => plain.parse(text) },
      { name: 'parseDevicePost', run: () => parseDevicePost(body, '127.0.0.1', 0) },
      { name: 'before: parseXml, XML text', run: () => parseXmlBefore(text) },
      { name: 'parseXml, XML text', run: () => parseXml(text) },
      { name: 'fast-xml-parser alone, our options', run: () => parserAlone.parse(text) },
    ], { before: 0, plain: 1 });
  }

  const page = await platePage(sim);
  const pageText = page.toString('utf8');
  table(`### GetLicensePlates answer of 100 plates (simulator): ${page.length} bytes`, [
    { name: 'before: parseXml', run: () => parseXmlBefore(page) },
    { name: 'plain fast-xml-parser', run: () => plain.parse(page.toString('utf8')) },
    { name: 'parseXml', run: () => parseXml(page) },
    { name: 'fast-xml-parser alone, our options', run: () => parserAlone.parse(pageText) },
  ], { before: 0, plain: 1 });
  console.log('(fast-xml-parser alone: its parse with our options, without our well-formedness check and without the conversion to XmlElement: the floor of parseXml)');

  const scene = jpegGrownTo(SNAPSHOT_JPEG, SCENE_BYTES).toString('base64');
  const crop = PLATE_JPEG.toString('base64');
  for (const [name, text] of [
    [`scene picture, ${(scene.length / 1024).toFixed(0)} KB of base64`, scene],
    [`scene picture, ${(scene.length / 1024).toFixed(0)} KB of base64 in lines of 76`, wrapped(scene)],
    [`plate crop, ${(crop.length / 1024).toFixed(1)} KB of base64`, crop],
  ] as const) {
    if (imageBase64(text) !== decodeImageBefore(text)?.toString('base64')) throw new Error(`${name}: base64 passed on differs from decoded and encoded again`);
    table(`### Plate image for images = base64: ${name}`, [
      { name: 'before: decode, check, encode again', run: () => decodeImageBefore(text)?.toString('base64') },
      { name: 'imageBase64: check, pass on', run: () => imageBase64(text) },
      { name: 'before: decode, check (images = buffer)', run: () => decodeImageBefore(text) },
      { name: 'decodeImage: check, decode (images = buffer)', run: () => decodeImage(text) },
    ], { before: 0 });
  }
  trackingPosts(scene);
  hostileCostPerByte();
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

/**
 * Tracking posts (6-12 a second per moving target) are told from their bytes and dropped before
 * the parser: what that check adds to every plate post (against parsing it), and what a tracking
 * post costs (against parsing it as the server did before).
 */
function trackingPosts(sceneBase64: string): void {
  const plate = Buffer.from(buildPlateEvent('nvr', { plate: 'ABC1234', listType: 'whiteList', scene: Buffer.from(sceneBase64, 'base64') }));
  table(`### Tracking check on a recorder plate post with a scene: ${(plate.length / 1024).toFixed(0)} KB`, [
    { name: 'parseDevicePost (the tracking check included)', run: () => parseDevicePost(plate, '127.0.0.1', 0) },
    { name: 'isTrackingPost alone (added to every post)', run: () => isTrackingPost(plate) },
  ], { parse: 0 });
  const tracking = Buffer.from(buildTrackingPost());
  table(`### A tracking post: ${tracking.length} bytes`, [
    { name: 'parseXml (what parsing it would cost)', run: () => parseXml(tracking) },
    { name: 'isTrackingPost (what dropping it costs)', run: () => isTrackingPost(tracking) },
  ], { parse: 0 });
}

/** Rounds of the cost-per-byte table: each input runs small and large once a round. */
const PER_BYTE_ROUNDS = 5;
const SMALL = 1_000;
const LARGE = 20_000;

/** Parses `text`, an EPARSE being an outcome as good as a result (most hostile inputs are refused). */
function refusedOrRead(parse: (text: string) => unknown): (text: string) => void {
  return (text) => {
    try {
      parse(text);
    } catch (err) {
      if (!(err instanceof IpcamError && err.code === 'EPARSE')) throw err;
    }
  };
}

/**
 * The hostile inputs the tests parse at a size only a linear parse gets through
 * (test/hostile-xml.ts), here at 20,000 against 1,000 repetitions: the cost per byte of the large
 * one over that of the small one, round by round. About 1 is linear; a parse that searched to
 * the end of the text for every tag would show about 20.
 */
function hostileCostPerByte(): void {
  const parseXmlOf = refusedOrRead((text) => parseXml(text));
  const postOf = refusedOrRead((text) => parseDevicePost(text, '127.0.0.1', 0, UNBOUNDED));
  const inputs: Array<[string, (n: number) => string, (text: string) => void]> = [
    ...HOSTILE_XML.map(([label, make]): [string, (n: number) => string, (text: string) => void] => [`parseXml: ${label}`, make, parseXmlOf]),
    ['parseDevicePost, limits lifted: camera post of n plates', cameraPlates, postOf],
    ['parseDevicePost, limits lifted: n image tags that never end', endlessImageTags, postOf],
  ];
  console.log(`\n### Hostile XML: cost per byte, large against small, same run (${LARGE.toLocaleString('en')} against ${SMALL.toLocaleString('en')} repetitions, ${PER_BYTE_ROUNDS} rounds)`);
  console.log('x per byte: (CPU time per byte of the large input) / (CPU time per byte of the small one), round by round; about 1 is linear, a quadratic parse shows about 20.');
  console.table(
    inputs.map(([name, make, parse]) => {
      const small = make(SMALL);
      const large = make(LARGE);
      const [smallTimes, largeTimes] = measure([
        { name: 'small', run: () => parse(small) },
        { name: 'large', run: () => parse(large) },
      ], PER_BYTE_ROUNDS) as [number[], number[]];
      const ratios = largeTimes.map((t, r) => t / large.length / ((smallTimes[r] as number) / small.length));
      return {
        input: name,
        'large chars': large.length,
        'us small': median(smallTimes).toFixed(1),
        'us large': median(largeTimes).toFixed(1),
        'x per byte': median(ratios).toFixed(2),
        'x per byte min..max': spread(ratios, 2),
      };
    }),
  );
}
