/**
 * Multipart streams: our parser against parsers that hand out the same thing (every part whole,
 * its body as a Buffer, its headers parsed), run round by round in the same process run, each
 * figure a ratio to ours per round (median and min..max printed); the heap after a forced GC over
 * 1,000,000 parts; end-to-end events/s from the simulator to the supervisor. Reports only;
 * nothing here asserts a time.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as Multipasta from 'multipasta';
import { ioMonitorPath, parseIoLines } from '../lib/ops/io';
import type { Simulator } from '../lib/simulator';
import { MultipartParser } from '../lib/cgi/multipart';
import { StreamSupervisor } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import { MultipartParser as TodayParser } from '../test/reference/multipart-1556f4a';
import { PASSWORD, USER } from './measure';

/** dicer ships no types: a Writable that emits `part` with a Readable per part. */
type DicerCtor = new (config: { boundary: string }) => Writable;
const Dicer = module.require('dicer') as DicerCtor;

const BOUNDARY = 'ioboundary';
const CONTENT_TYPE = `multipart/x-mixed-replace; boundary=${BOUNDARY}`;
const CHUNK = 64 * 1024;
const ROUNDS = 9;
const MB = 1e6;
const EMPTY = Buffer.alloc(0);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Workload {
  name: string;
  /** Bytes on the wire per part. */
  partBytes: number;
  parts: number;
  /** Body bytes of all parts (what every parser must hand out). */
  bodyBytes: number;
  /** Body and headers of part i are those of template i % templates.length. */
  templates: Array<{ body: Buffer; headers: Record<string, string> }>;
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

/** `count` parts as the devices frame them (boundary first), a closing boundary (unless `endless`), cut in 64 KB chunks. */
function workload(name: string, bodies: Buffer[], count: number, contentType: string, withLength: boolean, endless = false): Workload {
  const templates = bodies.map((body) => ({ body, headers: { 'content-type': contentType, ...(withLength && { 'content-length': String(body.length) }) } }));
  const framed = bodies.map((body) =>
    Buffer.concat([Buffer.from(`--${BOUNDARY}\r\nContent-Type: ${contentType}\r\n${withLength ? `Content-Length: ${body.length}\r\n` : ''}\r\n`, 'latin1'), body, Buffer.from('\r\n', 'latin1')]),
  );
  const frame = framed.reduce((n, f) => n + f.length, 0);
  const closing = endless ? EMPTY : Buffer.from(`--${BOUNDARY}--\r\n`, 'latin1');
  const all = Buffer.allocUnsafe(Math.ceil(count / framed.length) * frame + closing.length);
  let at = 0;
  let bodyBytes = 0;
  for (let i = 0; i < count; i++) {
    const index = i % framed.length;
    at += (framed[index] as Buffer).copy(all, at);
    bodyBytes += (bodies[index] as Buffer).length;
  }
  const partsEnd = at;
  at += closing.copy(all, at);
  const chunks: Buffer[] = [];
  // Separate buffers, as a socket hands them out.
  for (let from = 0; from < at; from += CHUNK) chunks.push(Buffer.from(all.subarray(from, Math.min(at, from + CHUNK))));
  return { name, partBytes: Math.round(partsEnd / count), parts: count, bodyBytes, templates, chunks, total: at };
}

/** What a parser hands out per part, as the consumer sees it. */
type Sink = (headers: Readonly<Record<string, string | string[]>>, body: Uint8Array) => void;
type Runner = (w: Workload) => Promise<void> | void;

/**
 * Where the parsers hand their parts, set before each run. The callbacks given to the parsers are
 * made once, as a long-lived consumer's are: a fresh closure per run would make V8 drop the
 * optimised code that called the last one, a cost a real stream pays once.
 */
let sink: Sink = () => undefined;
const toSink = (part: { headers: Readonly<Record<string, string>>; body: Buffer }): void => sink(part.headers, part.body);
const fieldToSink = (info: Multipasta.PartInfo, value: Uint8Array): void => sink(info.headers, value);

const ours: Runner = (w) => {
  const parser = new MultipartParser(BOUNDARY, { onPart: toSink });
  for (const chunk of w.chunks) parser.write(chunk);
  parser.flush();
};

const today: Runner = (w) => {
  const parser = new TodayParser(BOUNDARY, { onPart: toSink });
  for (const chunk of w.chunks) parser.write(chunk);
  parser.flush();
};

const dicer: Runner = async (w) => {
  const d = new Dicer({ boundary: BOUNDARY });
  d.on('part', (part: NodeJS.ReadableStream) => {
    // Collect the body as the others hand it out: one Buffer per part.
    const pieces: Buffer[] = [];
    let headers: Record<string, string[]> = {};
    part.on('header', (h: Record<string, string[]>) => (headers = h));
    part.on('data', (data: Buffer) => pieces.push(data));
    part.on('end', () => sink(headers, pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces)));
  });
  const finished = once(d, 'finish');
  for (const chunk of w.chunks) if (!d.write(chunk)) await once(d, 'drain');
  d.end();
  await finished;
};

const multipasta: Runner = (w) => {
  const parser = Multipasta.make({
    headers: { 'content-type': CONTENT_TYPE },
    // Every part whole in one value (its "field" mode), as ours hands them out.
    isFile: () => false,
    maxFieldSize: Infinity,
    onField: fieldToSink,
    onFile: () => () => undefined,
    onError: (error) => {
      throw new Error(`multipasta: ${error._tag}`);
    },
    onDone: () => undefined,
  });
  for (const chunk of w.chunks) parser.write(chunk);
  parser.end();
};

/**
 * The same-output scan: what a parser must do at the least to hand out what ours does on this
 * input. Finds `\r\n--boundary` with Buffer.indexOf across chunk edges (a tail that may begin a
 * boundary is kept, checked against the start of the next chunk without copying it), hands out
 * each body as a view when it lies in one chunk (joined once otherwise), and parses every header
 * block into a fresh object of lower-case names and trimmed values. It ignores Content-Length,
 * handles CRLF framing only and has no caps, quirks or resynchronisation.
 */
const toSinkScan = (headers: Record<string, string>, body: Buffer): void => sink(headers, body);

class SameOutputScan {
  private readonly needle: Buffer;
  private readonly blockEnd = Buffer.from('\r\n\r\n', 'latin1');
  private state: 'seek' | 'head' | 'body' = 'seek';
  private carry: Buffer = EMPTY;
  private pieces: Buffer[] = [];
  private piecesLength = 0;
  private headers: Record<string, string> = {};

  constructor(
    boundary: string,
    private readonly onPart: (headers: Record<string, string>, body: Buffer) => void,
  ) {
    this.needle = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  write(chunk: Buffer): void {
    let data = chunk;
    if (this.carry.length > 0) {
      const probe = this.state === 'body' && chunk.length >= this.needle.length ? Buffer.concat([this.carry, chunk.subarray(0, this.needle.length - 1)]) : undefined;
      if (probe !== undefined && probe.indexOf(this.needle) < 0) this.takeBody(this.carry);
      else data = Buffer.concat([this.carry, chunk]);
      this.carry = EMPTY;
    }
    let pos = 0;
    while (pos < data.length) {
      if (this.state === 'seek') {
        // The first boundary has no line break before it.
        const at = data.indexOf(this.needle.subarray(2), pos);
        if (at < 0) return this.keep(data, Math.max(pos, data.length - this.needle.length));
        pos = at + this.needle.length - 2;
        this.state = 'head';
      } else if (this.state === 'head') {
        if (data.length - pos < 2) return this.keep(data, pos);
        if (data[pos] === 0x2d && data[pos + 1] === 0x2d) {
          this.state = 'seek';
          continue;
        }
        const end = data.indexOf(this.blockEnd, pos);
        if (end < 0) return this.keep(data, pos);
        const lines = data.toString('latin1', pos, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (let i = 1; i < lines.length; i++) {
          const line = lines[i] as string;
          const colon = line.indexOf(':');
          if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
        }
        this.headers = headers;
        pos = end + 4;
        this.state = 'body';
      } else {
        const at = data.indexOf(this.needle, pos);
        if (at < 0) {
          const keepFrom = Math.max(pos, data.length - this.needle.length + 1);
          this.takeBody(data.subarray(pos, keepFrom));
          return this.keep(data, keepFrom);
        }
        const tail = data.subarray(pos, at);
        const body = this.pieces.length === 0 ? tail : Buffer.concat([...this.pieces, tail], this.piecesLength + tail.length);
        this.pieces = [];
        this.piecesLength = 0;
        this.onPart(this.headers, body);
        pos = at + this.needle.length;
        this.state = 'head';
      }
    }
  }

  private takeBody(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.pieces.push(bytes);
    this.piecesLength += bytes.length;
  }

  private keep(data: Buffer, from: number): void {
    this.carry = from >= data.length ? EMPTY : Buffer.from(data.subarray(from));
  }
}

const sameOutputScan: Runner = (w) => {
  const scan = new SameOutputScan(BOUNDARY, toSinkScan);
  for (const chunk of w.chunks) scan.write(chunk);
};

interface Contender {
  name: string;
  run: Runner;
  /** What it does differently from ours, printed beside its figures. */
  note: string;
}

const CONTENDERS: Contender[] = [
  { name: 'ours (MultipartParser)', run: ours, note: 'lenient framing, caps; header block reused when its bytes repeat (each part its own copy)' },
  { name: "today's parser (main 1556f4a)", run: today, note: 'the same parser before this change: parses every header block' },
  { name: 'same-output scan', run: sameOutputScan, note: 'CRLF only, no caps or quirks, fresh header object per part (see bench/streams.ts)' },
  { name: 'multipasta (field mode)', run: multipasta, note: 'RFC 7578 form-data parser: also parses Content-Type/-Disposition per part; bodies Uint8Array' },
  { name: 'dicer', run: dicer, note: 'a Readable per part, body as data events (joined here), headers as arrays' },
];

/**
 * One untimed run: the parts and bodies must be those sent; counts bodies that are views of an
 * input chunk and parts with a header value other than the one sent (reported, not fatal).
 */
async function check(c: Contender, w: Workload): Promise<{ views: number; badHeaders: number }> {
  const inputs = new Set(w.chunks.map((chunk) => chunk.buffer));
  let index = 0;
  let views = 0;
  let badHeaders = 0;
  let wrong = '';
  sink = (headers, body) => {
    const expected = w.templates[index % w.templates.length];
    index += 1;
    if (expected === undefined || wrong !== '') return;
    if (!Buffer.from(body.buffer, body.byteOffset, body.length).equals(expected.body)) wrong = `part ${index - 1}: body differs`;
    if (Object.entries(expected.headers).some(([name, value]) => [headers[name]].flat()[0] !== value)) badHeaders += 1;
    if (inputs.has(body.buffer)) views += 1;
  };
  await c.run(w);
  if (index !== w.parts) wrong ||= `handed out ${index} parts, expected ${w.parts}`;
  if (wrong !== '') throw new Error(`${c.name} on ${w.name}: ${wrong}`);
  return { views, badHeaders };
}

interface Run {
  /** CPU time of the process (user + system), ms: what the ratios are taken on. */
  cpu: number;
  wall: number;
}

/**
 * Runs `c` once; the consumer touches the body and a header of every part. The CPU time counts
 * the parser's work (and its garbage collection) but not the time other processes held the core.
 * No forced GC here: it would make V8 drop optimised code that refers to objects it frees, which
 * a long-lived parser never sees (garbage of one run is collected in the next, as in use).
 */
async function timed(c: Contender, w: Workload): Promise<Run> {
  let parts = 0;
  let bytes = 0;
  let typed = 0;
  sink = (headers, body) => {
    parts += 1;
    bytes += body.length;
    if (headers['content-type'] !== undefined) typed += 1;
  };
  const cpu = process.cpuUsage();
  const start = performance.now();
  await c.run(w);
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  if (parts !== w.parts || bytes !== w.bodyBytes || typed !== w.parts) throw new Error(`${c.name} handed out ${parts} parts / ${bytes} bytes / ${typed} typed, expected ${w.parts} / ${w.bodyBytes}`);
  return { cpu: (used.user + used.system) / 1000, wall };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** `median (min..max)` of per-round ratios. */
function spread(values: number[], digits = 2): string {
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}..${Math.max(...values).toFixed(digits)})`;
}

async function compareParsers(w: Workload): Promise<void> {
  console.log(`\n### ${w.name}: ${w.parts.toLocaleString('en-US')} parts of ${w.partBytes} B, ${(w.total / MB).toFixed(1)} MB in ${CHUNK / 1024} KB chunks (${ROUNDS} rounds, interleaved)`);
  const checks: Array<{ views: number; badHeaders: number }> = [];
  for (const c of CONTENDERS) checks.push(await check(c, w));
  gc();
  for (const c of CONTENDERS) await timed(c, w); // warm-up
  const runs = CONTENDERS.map((): Run[] => []);
  // Round by round, so that drift of the machine hits every parser alike, each round starting
  // with another parser, so that none always follows the same one (and its garbage).
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < CONTENDERS.length; k++) {
      const i = (r + k) % CONTENDERS.length;
      runs[i]?.push(await timed(CONTENDERS[i] as Contender, w));
    }
  }
  const ours = (runs[0] as Run[]).map((run) => run.cpu);
  const rows = CONTENDERS.map((c, i) => {
    const cpu = (runs[i] as Run[]).map((run) => run.cpu);
    const ms = median(cpu);
    return {
      parser: c.name,
      'CPU ms': ms.toFixed(1),
      'wall ms': median((runs[i] as Run[]).map((run) => run.wall)).toFixed(1),
      'MB/CPU-s': (w.total / MB / (ms / 1000)).toFixed(0),
      'parts/CPU-s': Math.round(w.parts / (ms / 1000)).toLocaleString('en-US'),
      'ours x as fast (min..max)': i === 0 ? '-' : spread(cpu.map((time, r) => time / (ours[r] as number))),
      'bodies: views of a chunk': `${((100 * (checks[i]?.views ?? 0)) / w.parts).toFixed(0)}%`,
      'header values not as sent': checks[i]?.badHeaders ?? 0,
    };
  });
  console.table(rows);
}

async function parserThroughput(): Promise<void> {
  console.log('\n## Multipart parsers handing out the same thing: every part whole, body as one buffer, headers parsed');
  console.table(CONTENDERS.map((c) => ({ parser: c.name, 'differs from ours': c.note })));
  console.log(
    [
      '"ours x as fast": the contender\'s CPU time over ours in the same round, median (min..max) over rounds; > 1 means ours is faster.',
      '"bodies: views of a chunk": bodies sharing memory with an input chunk. The others are views of a chunk joined to the bytes kept',
      'from the one before (ours, the scan and multipasta copy a chunk whole when a line or boundary crosses into it: one copy per chunk,',
      'none per part), or copies of bodies that span chunks. "header values not as sent": parts whose Content-Type/-Length differ.',
    ].join('\n'),
  );
  const io = ['IO1:/', 'IO1:\\', 'IO2:/', 'IO2:\\'].map((s) => Buffer.from(s, 'latin1'));
  // Bodies of 5 to 8 bytes: with Content-Length, no header block repeats the one before it.
  const changing = ['IO1:/', 'IO1:\\\n', 'IO1:/\nI', 'IO1:\\\nIO'].map((s) => Buffer.from(s, 'latin1'));
  const image = [pseudoRandom(100 * 1024, 1), pseudoRandom(100 * 1024, 2)];
  const small = 100_000;
  const large = 300;
  await compareParsers(workload('I/O parts, no Content-Length', io, small, 'text/plain', false));
  await compareParsers(workload('I/O parts, with Content-Length', io, small, 'text/plain', true));
  await compareParsers(workload('I/O parts, Content-Length changing on every part (no header block reused)', changing, small, 'text/plain', true));
  await compareParsers(workload('100 KB image parts, no Content-Length', image, large, 'image/jpeg', false));
  await compareParsers(workload('100 KB image parts, with Content-Length', image, large, 'image/jpeg', true));
}

/** heapUsed after a forced full GC (twice: the first may leave finalised buffers for the second). */
function heapMB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / MB;
}

interface StreamParser {
  write(chunk: Buffer): void;
  flush(): void;
}

/** A parser fed 1,000,000 I/O parts (an endless stream): the heap after a forced GC, before and after. */
function heapAfterParts(): void {
  // No closing boundary: the stream goes on from one round to the next.
  const w = workload('I/O parts', [Buffer.from('IO1:/', 'latin1'), Buffer.from('IO1:\\', 'latin1')], 100_000, 'text/plain', false, true);
  const rows = [
    ['ours', (onPart: () => void): StreamParser => new MultipartParser(BOUNDARY, { onPart })],
    ["today's parser", (onPart: () => void): StreamParser => new TodayParser(BOUNDARY, { onPart })],
  ] as const;
  console.log('\n## Memory over 1,000,000 parts (after a forced GC, before the first part and after the last; the parser still alive)');
  const table = rows.map(([name, make]) => {
    let parts = 0;
    const parser = make(() => void (parts += 1));
    const before = heapMB();
    const buffersBefore = process.memoryUsage().arrayBuffers / MB;
    for (let round = 0; round < 10; round++) for (const chunk of w.chunks) parser.write(Buffer.from(chunk));
    parser.flush();
    const after = heapMB();
    const buffersAfter = process.memoryUsage().arrayBuffers / MB;
    return {
      parser: name,
      parts: parts.toLocaleString('en-US'),
      'heapUsed before (MB)': before.toFixed(1),
      'heapUsed after (MB)': after.toFixed(1),
      'heap growth (MB)': (after - before).toFixed(2),
      'arrayBuffers growth (MB)': (buffersAfter - buffersBefore).toFixed(2),
    };
  });
  console.table(table);
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
  console.log(`Heap after a forced GC (simulator and client in one process): ${heapBefore.toFixed(1)} MB before, ${heapAfter.toFixed(1)} MB after ${count.toLocaleString('en-US')} events (${(heapAfter - heapBefore).toFixed(2)} MB)`);
}

export async function streamsThroughput(sim: Simulator): Promise<void> {
  await parserThroughput();
  heapAfterParts();
  await endToEnd(sim, 1_000_000);
}
