/**
 * Multipart streams: parser throughput against dicer and multipasta and against one plain
 * Buffer.indexOf pass (the ceiling), end-to-end events/s from the simulator to the supervisor,
 * and the heap after 1,000,000 parts. Reports only; nothing here asserts a time.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as Multipasta from 'multipasta';
import { ioMonitorPath, parseIoLines } from '../lib/cgi/io';
import type { Simulator } from '../lib/simulator';
import { MultipartParser } from '../lib/stream/multipart';
import { StreamSupervisor } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import { PASSWORD, USER } from './measure';

/** dicer ships no types: a Writable that emits `part` with a Readable per part. */
type DicerCtor = new (config: { boundary: string }) => Writable;
const Dicer = module.require('dicer') as DicerCtor;

const BOUNDARY = 'ioboundary';
const CONTENT_TYPE = `multipart/x-mixed-replace; boundary=${BOUNDARY}`;
const CHUNK = 64 * 1024;
const ROUNDS = 7;
const MB = 1e6;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Workload {
  name: string;
  /** Bytes on the wire per part. */
  partBytes: number;
  parts: number;
  /** Body bytes of all parts (what every parser must hand out). */
  bodyBytes: number;
  chunks: Buffer[];
  total: number;
}

/** Deterministic bytes for image-sized bodies (mulberry32). */
function pseudoRandom(length: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let a = seed >>> 0;
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) & 0xff;
  }
  return out;
}

/** `count` parts as the devices frame them (boundary first), a closing boundary, cut in 64 KB chunks. */
function workload(name: string, bodies: Buffer[], count: number, contentType: string, withLength: boolean): Workload {
  const framed = bodies.map((body) =>
    Buffer.concat([Buffer.from(`--${BOUNDARY}\r\nContent-Type: ${contentType}\r\n${withLength ? `Content-Length: ${body.length}\r\n` : ''}\r\n`, 'latin1'), body, Buffer.from('\r\n', 'latin1')]),
  );
  const pieces: Buffer[] = [];
  let bodyBytes = 0;
  for (let i = 0; i < count; i++) {
    const index = i % framed.length;
    pieces.push(framed[index] as Buffer);
    bodyBytes += (bodies[index] as Buffer).length;
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`, 'latin1'));
  const all = Buffer.concat(pieces);
  const chunks: Buffer[] = [];
  // Separate buffers, as a socket hands them out.
  for (let at = 0; at < all.length; at += CHUNK) chunks.push(Buffer.from(all.subarray(at, Math.min(all.length, at + CHUNK))));
  const closing = (pieces.at(-1) as Buffer).length;
  return { name, partBytes: Math.round((all.length - closing) / count), parts: count, bodyBytes, chunks, total: all.length };
}

interface Outcome {
  parts: number;
  bytes: number;
}

type Runner = (w: Workload) => Promise<Outcome> | Outcome;

const ours: Runner = (w) => {
  const out: Outcome = { parts: 0, bytes: 0 };
  const parser = new MultipartParser(BOUNDARY, {
    onPart: (part) => {
      out.parts += 1;
      out.bytes += part.body.length;
    },
  });
  for (const chunk of w.chunks) parser.write(chunk);
  parser.flush();
  return out;
};

const dicer: Runner = async (w) => {
  const out: Outcome = { parts: 0, bytes: 0 };
  const d = new Dicer({ boundary: BOUNDARY });
  d.on('part', (part: NodeJS.ReadableStream) => {
    // Collect the body as the others hand it out: one Buffer per part.
    const pieces: Buffer[] = [];
    part.on('header', () => undefined);
    part.on('data', (data: Buffer) => pieces.push(data));
    part.on('end', () => {
      out.parts += 1;
      out.bytes += pieces.length === 1 ? (pieces[0] as Buffer).length : Buffer.concat(pieces).length;
    });
  });
  const finished = once(d, 'finish');
  for (const chunk of w.chunks) if (!d.write(chunk)) await once(d, 'drain');
  d.end();
  await finished;
  return out;
};

const multipasta: Runner = (w) => {
  const out: Outcome = { parts: 0, bytes: 0 };
  const parser = Multipasta.make({
    headers: { 'content-type': CONTENT_TYPE },
    // Every part kept whole in memory (as a field), like ours.
    isFile: () => false,
    maxFieldSize: Infinity,
    onField: (_info, value) => {
      out.parts += 1;
      out.bytes += value.length;
    },
    onFile: () => () => undefined,
    onError: (error) => {
      throw new Error(`multipasta: ${error._tag}`);
    },
    onDone: () => undefined,
  });
  for (const chunk of w.chunks) parser.write(chunk);
  parser.end();
  return out;
};

/** The ceiling: one Buffer.indexOf pass for the boundary over the same chunks, nothing else. */
const plainScan: Runner = (w) => {
  const needle = Buffer.from(`--${BOUNDARY}`, 'latin1');
  let parts = 0;
  for (const chunk of w.chunks) {
    for (let at = chunk.indexOf(needle); at >= 0; at = chunk.indexOf(needle, at + needle.length)) parts += 1;
  }
  return { parts, bytes: 0 };
};

interface Row {
  parser: string;
  'MB/s': string;
  'parts/s': string;
  'speed vs ours': string;
}

/** Runs `run` once; checks that it handed out every part whole. */
async function timed(name: string, run: Runner, w: Workload): Promise<number> {
  gc();
  const start = performance.now();
  const outcome = await run(w);
  const ms = performance.now() - start;
  if (run !== plainScan && (outcome.parts !== w.parts || outcome.bytes !== w.bodyBytes)) {
    throw new Error(`${name} handed out ${outcome.parts} parts / ${outcome.bytes} bytes, expected ${w.parts} / ${w.bodyBytes}`);
  }
  return ms;
}

async function compareParsers(w: Workload): Promise<void> {
  console.log(`\n### ${w.name}: ${w.parts.toLocaleString('en-US')} parts of ${w.partBytes} B, ${(w.total / MB).toFixed(1)} MB in ${CHUNK / 1024} KB chunks (median of ${ROUNDS}, rounds interleaved)`);
  const runners: Array<[string, Runner]> = [
    ['ours (MultipartParser)', ours],
    ['dicer', dicer],
    ['multipasta', multipasta],
    ['plain Buffer.indexOf pass (ceiling)', plainScan],
  ];
  for (const [name, run] of runners) await timed(name, run, w); // warm-up
  const times = runners.map((): number[] => []);
  // Round by round, so that drift of the machine hits every parser alike.
  for (let r = 0; r < ROUNDS; r++) for (const [i, [name, run]] of runners.entries()) times[i]?.push(await timed(name, run, w));
  const median = times.map((t) => (t.sort((a, b) => a - b)[Math.floor(t.length / 2)] as number));
  const ms = (prefix: string): number => median[runners.findIndex(([name]) => name.startsWith(prefix))] as number;
  const oursMs = ms('ours');
  const rows: Row[] = runners.map(([name], i) => {
    const t = median[i] as number;
    return {
      parser: name,
      'MB/s': (w.total / MB / (t / 1000)).toFixed(0),
      'parts/s': Math.round(w.parts / (t / 1000)).toLocaleString('en-US'),
      'speed vs ours': (oursMs / t).toFixed(2),
    };
  });
  console.table(rows);
  console.log(`ours: ${(ms('dicer') / oursMs).toFixed(2)}x dicer, ${(ms('multipasta') / oursMs).toFixed(2)}x multipasta, ${((100 * ms('plain')) / oursMs).toFixed(0)}% of the plain scan`);
}

async function parserThroughput(): Promise<void> {
  console.log('\n## Multipart parser throughput: ours, dicer, multipasta and a plain Buffer.indexOf scan');
  const io = ['IO1:/', 'IO1:\\', 'IO2:/', 'IO2:\\'].map((s) => Buffer.from(s, 'latin1'));
  const image = [pseudoRandom(100 * 1024, 1), pseudoRandom(100 * 1024, 2)];
  const small = 100_000;
  const large = 300;
  for (const withLength of [false, true]) {
    const label = withLength ? 'with Content-Length' : 'no Content-Length';
    await compareParsers(workload(`I/O parts, ${label}`, io, small, 'text/plain', withLength));
    await compareParsers(workload(`100 KB image parts, ${label}`, image, large, 'image/jpeg', withLength));
  }
}

function heapMB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / MB;
}

/** The same parser fed 1,000,000 I/O parts: the heap after against before. */
function heapAfterParts(): void {
  const w = workload('I/O parts', [Buffer.from('IO1:/', 'latin1'), Buffer.from('IO1:\\', 'latin1')], 100_000, 'text/plain', false);
  w.chunks.pop(); // no closing boundary: the stream goes on
  let parts = 0;
  const parser = new MultipartParser(BOUNDARY, { onPart: () => void (parts += 1) });
  parser.write(w.chunks[0] as Buffer);
  const before = heapMB();
  for (let round = 0; round < 10; round++) for (const chunk of w.chunks) parser.write(Buffer.from(chunk));
  parser.flush();
  const after = heapMB();
  console.log(`\nParser heap: ${before.toFixed(1)} MB before, ${after.toFixed(1)} MB after ${parts.toLocaleString('en-US')} parts (${(after - before).toFixed(2)} MB)`);
}

/** Input changes at the simulator until `count` events have come out of the supervisor; events/s and heap. */
async function endToEnd(sim: Simulator, count: number): Promise<void> {
  console.log(`\n## End to end: ${count.toLocaleString('en-US')} input changes, simulator -> socket -> supervisor -> parsed { port, active, edge }`);
  const client = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'basic' });
  let received = 0;
  let wrong = 0;
  let expectActive = true;
  const supervisor = new StreamSupervisor({
    client,
    path: ioMonitorPath('input', [1]),
    onPart: (part) => {
      for (const state of parseIoLines(part.body.toString('latin1'))) {
        if (state.edge === null) continue; // the current state sent first
        received += 1;
        if (state.active !== expectActive) wrong += 1;
        expectActive = !expectActive;
      }
    },
  });
  const connected = new Promise<void>((resolve) => {
    const wait = (): void => void (supervisor.current === 'connected' && sim.state.io.openStreams === 1 ? resolve() : setTimeout(wait, 5));
    wait();
  });
  supervisor.start();
  await connected;
  sim.state.io.setInput(1, false);
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  const window = 5_000;
  const batch = 1_000;
  const heapBefore = heapMB();
  const start = performance.now();
  let sent = 0;
  let active = false;
  while (sent < count) {
    for (let i = 0; i < batch && sent < count; i++, sent++) {
      active = !active;
      sim.state.io.setInput(1, active);
    }
    while (sent - received > window) await turn();
  }
  while (received < count) await turn();
  const seconds = (performance.now() - start) / 1000;
  const heapAfter = heapMB();
  await supervisor.stop();
  await client.close();
  console.log(`${count.toLocaleString('en-US')} events in ${seconds.toFixed(2)} s: ${Math.round(count / seconds).toLocaleString('en-US')} events/s (at most ${window} in flight), ${wrong} out of order`);
  console.log(`Heap (simulator and client in one process): ${heapBefore.toFixed(1)} MB before, ${heapAfter.toFixed(1)} MB after ${count.toLocaleString('en-US')} events (${(heapAfter - heapBefore).toFixed(2)} MB)`);
}

export async function streamsThroughput(sim: Simulator): Promise<void> {
  await parserThroughput();
  heapAfterParts();
  await endToEnd(sim, 1_000_000);
}
