import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARSE_LIMITS, parseDevicePost, type PlateDetection } from '../lib/events/parse';
import { EventServer } from '../lib/events/server';
import type { Simulator } from '../lib/simulator';
import { buildPlateEvent, EventPoster, type EventFormat, type PostTarget } from '../lib/simulator/events';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';

const CONNECTIONS = 4;
const SMALL_COUNT = 20_000;
const LARGE_COUNT = 300;
const HEAP_COUNT = 100_000;
const SCENE_BYTES = 480 * 1024;
/** Same length as the plates it is replaced by, so that one built document serves every post. */
const PLATE_MARK = 'BENCH00000';

/** The snapshot grown to `size` bytes with JPEG comment segments after SOI: still a valid JPEG. */
function paddedJpeg(jpeg: Buffer, size: number): Buffer {
  const segments: Buffer[] = [];
  let missing = size - jpeg.length;
  let seed = 12345;
  while (missing > 4) {
    const payload = Math.min(65_533, missing - 4);
    const segment = Buffer.alloc(payload + 4);
    segment.writeUInt16BE(0xfffe, 0);
    segment.writeUInt16BE(payload + 2, 2);
    // Noise like compressed image data, not a run that compresses or repeats.
    for (let i = 4; i < segment.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      segment[i] = seed >> 16;
    }
    segments.push(segment);
    missing -= segment.length;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

function plateOf(i: number): string {
  return `B${String(i).padStart(PLATE_MARK.length - 1, '0')}`;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

interface Row {
  case: string;
  'body KB': string;
  events: number;
  'events/s': number;
  'p50 ms': string;
  'p99 ms': string;
  'max ms': string;
}

/**
 * Events per second and latency from the post leaving the simulator poster to the subscriber
 * callback of the EventServer, over loopback with a few connections; heap across 100,000 events.
 * The parser against fast-xml-parser on the same text is in bench/xml.ts.
 */
export async function eventsThroughput(sim: Simulator): Promise<void> {
  console.log(`\n## Device events: simulator poster -> EventServer over loopback, ${CONNECTIONS} connections`);
  const server = new EventServer({ port: 0, bind: '127.0.0.1', onWarning: (text) => console.warn(`event server warning: ${text}`) });
  await server.start();
  const poster = new EventPoster(sim.state);
  const url = `http://127.0.0.1:${server.port}/`;
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let delivered = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  server.subscribe({
    onPost: (received) => {
      const now = performance.now();
      for (const post of received.posts) {
        const t0 = post.kind === 'plate' ? sentAt.get((post as PlateDetection).plate) : undefined;
        if (t0 !== undefined) latencies.push(now - t0);
      }
      delivered += 1;
      if (waiter && delivered >= waiter.n) waiter.resolve();
    },
  });
  const deliveredAll = (n: number): Promise<void> => (delivered >= n ? Promise.resolve() : new Promise((resolve) => (waiter = { n, resolve })));

  /** Posts `count` copies of `template` with distinct plates, CONNECTIONS at a time; the wall time until all are delivered. */
  const blast = async (format: EventFormat, template: string, count: number): Promise<number> => {
    const target: PostTarget = { url, format, connections: CONNECTIONS };
    const [head, tail] = template.split(PLATE_MARK) as [string, string];
    const start = performance.now();
    const base = delivered;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const plate = plateOf(next++);
        const body = head + plate + tail;
        sentAt.set(plate, performance.now());
        const { status } = await poster.send(target, body);
        if (status !== 200) throw new Error(`post answered ${status}`);
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
    await deliveredAll(base + count);
    return performance.now() - start;
  };

  const scene = paddedJpeg(SNAPSHOT_JPEG, SCENE_BYTES);
  // What a newer camera or recorder sends about a plate besides the pictures.
  const fields = { listType: 'whiteList', direction: 'approach', confidence: 98.5, vehicle: { color: 'white', type: 'sedan', brand: 'Toyota', model: 'Corolla' } } as const;
  const rows: Row[] = [];
  const cases: Array<{ name: string; format: EventFormat; template: string; count: number }> = [
    { name: 'camera (ipc), no images', format: 'ipc', template: buildPlateEvent('ipc', { plate: PLATE_MARK, ...fields, images: false }), count: SMALL_COUNT },
    { name: 'recorder (nvr), no images', format: 'nvr', template: buildPlateEvent('nvr', { plate: PLATE_MARK, ...fields, images: false }), count: SMALL_COUNT },
    { name: 'camera (ipc), 480 KB scene', format: 'ipc', template: buildPlateEvent('ipc', { plate: PLATE_MARK, ...fields, scene }), count: LARGE_COUNT },
    { name: 'recorder (nvr), 480 KB scene', format: 'nvr', template: buildPlateEvent('nvr', { plate: PLATE_MARK, ...fields, scene }), count: LARGE_COUNT },
  ];
  for (const c of cases) {
    await blast(c.format, c.template, Math.min(500, c.count)); // warm-up: connections, JIT
    latencies.length = 0;
    sentAt.clear();
    const ms = await blast(c.format, c.template, c.count);
    latencies.sort((a, b) => a - b);
    rows.push({
      case: c.name,
      'body KB': (Buffer.byteLength(c.template) / 1024).toFixed(1),
      events: c.count,
      'events/s': Math.round((c.count * 1000) / ms),
      'p50 ms': percentile(latencies, 50).toFixed(2),
      'p99 ms': percentile(latencies, 99).toFixed(2),
      'max ms': (latencies[latencies.length - 1] ?? NaN).toFixed(2),
    });
  }
  sentAt.clear();
  latencies.length = 0;
  console.table(rows);
  console.log('(the camera format carries the scene twice, as the overview item and as sourceDataInfo, as the captures do)');

  // Heap across many small events: what the server and its parser keep.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const small = cases[0] as { template: string };
  const ms = await blast('ipc', small.template, HEAP_COUNT);
  sentAt.clear();
  latencies.length = 0;
  gc?.();
  const heapAfter = process.memoryUsage().heapUsed;
  const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);
  console.log(
    `heap used: ${mb(heapBefore)} MB before, ${mb(heapAfter)} MB after ${HEAP_COUNT.toLocaleString('en')} small events ` +
      `(${(heapAfter - heapBefore >= 0 ? '+' : '') + mb(heapAfter - heapBefore)} MB; ${Math.round((HEAP_COUNT * 1000) / ms)} events/s); ` +
      (gc ? 'measured after global.gc()' : 'without gc (run node with --expose-gc for settled figures)'),
  );

  await poster.close();
  await server.close();

  parseScaling();
}

/** A camera post with `count` plate items after an overview item (no item carries `carAttr` or `PlateConfidence`). */
function manyPlates(count: number): string {
  const items = ['<item><targetImageData><targetBase64Data type="string"><![CDATA[BASE64]]></targetBase64Data></targetImageData></item>'];
  for (let i = 0; i < count; i++) items.push(`<item><plateNumber type="string"><![CDATA[P${i}]]></plateNumber><vehicleListType type="string">whiteList</vehicleListType></item>`);
  return `<config version="1.7" xmlns="http://www.ipc.com/ver10"><smartType type="openAlramObj">VEHICE</smartType><currentTime type="tint64">1700000000000000</currentTime><listInfo type="list">${items.join('')}</listInfo></config>`;
}

/**
 * Parse cost against post size: camera posts of 100 to 20,000 plates with the limits lifted (cost
 * per byte against the 100-plate post: 1.0 means linear), the refusal of the 20,000-plate post at
 * the default limits, and the dearest posts the default limits let through, against a real capture.
 */
function parseScaling(): void {
  console.log('\n## Device post parsing: cost against size (camera posts with many plates, limits lifted)');
  const unbounded = { maxNodes: Infinity, maxMarkup: Infinity, maxItems: Infinity };
  const sizes = [100, 1_000, 20_000];
  const docs = sizes.map(manyPlates);
  const times = docs.map((doc, i) => timeSync(() => parseDevicePost(doc, '127.0.0.1', 0, unbounded), i === 2 ? 1 : 20));
  const perByte = (i: number): number => (times[i] as number) / (docs[i] as string).length;
  console.table(
    sizes.map((n, i) => ({
      plates: n,
      'body KB': ((docs[i] as string).length / 1024).toFixed(0),
      'parse (ms)': (times[i] as number).toFixed(2),
      'us/plate': (((times[i] as number) * 1000) / n).toFixed(1),
      'cost per byte x 100 plates': (perByte(i) / perByte(0)).toFixed(2),
    })),
  );

  const capture = readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'captures', 'tvt-events', 'ipc-v1x', 'lpr.xml'));
  const real = timeSync(() => parseDevicePost(capture, '127.0.0.1'));
  const head = '<config version="1.7"><smartType>PEA</smartType>';
  const worst: Array<[string, string]> = [
    ['20,000 plates, refused (markup over the cap)', docs[2] as string],
    [`${PARSE_LIMITS.maxNodes - 4} elements (at the node cap)`, `${head}<list>${'<i/>'.repeat(PARSE_LIMITS.maxNodes - 4)}</list></config>`],
    [`${PARSE_LIMITS.maxNodes - 4} attributes (at the node cap)`, `${head}<a ${Array.from({ length: PARSE_LIMITS.maxNodes - 4 }, (_, i) => `x${i}="1"`).join(' ')}/></config>`],
    [`${PARSE_LIMITS.maxMarkup / 1024} KiB of text (at the markup cap)`, `${head}<a>${'x'.repeat(PARSE_LIMITS.maxMarkup - head.length - 20)}</a></config>`],
  ];
  console.log(`\n## Device post parsing at the default limits, against a real camera plate post (${capture.length} bytes, ${(real * 1000).toFixed(0)} us)`);
  console.table(
    worst.map(([name, doc]) => {
      const ms = timeSync(() => {
        try {
          parseDevicePost(doc, '127.0.0.1');
        } catch {
          // refused: the time of refusing is what is measured
        }
      }, 5);
      return { post: name, 'body KB': (doc.length / 1024).toFixed(0), ms: ms.toFixed(2), 'x real post': (ms / real).toFixed(0) };
    }),
  );
}

/** Median over 5 rounds of the mean time of one call (ms), `calls` calls a round. */
function timeSync(call: () => unknown, calls = 20): number {
  for (let i = 0; i < calls; i++) call();
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) call();
    rounds.push((performance.now() - start) / calls);
  }
  rounds.sort((a, b) => a - b);
  return rounds[2] as number;
}
