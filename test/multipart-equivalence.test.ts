/**
 * The parser reuses a parsed header block when its bytes repeat and hands bodies out as views:
 * on random streams cut at random places it must do exactly what the parser before that change
 * did (test/reference/multipart-1556f4a.ts, a verbatim copy): the same parts in the same order,
 * the same header names and values, the same body bytes, the same warnings in the same places.
 *
 * Streams come from a seeded PRNG: a failure prints the seed, and MULTIPART_SEED=<seed> replays
 * it (MULTIPART_STREAMS=<n> runs more streams). The number of streams is fixed; nothing is timed.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MultipartParser, type MultipartOptions, type MultipartPart } from '../lib/cgi/multipart';
import { MultipartParser as ReferenceParser } from './reference/multipart-1556f4a';
import { prng } from './helpers';

interface Parser {
  write(chunk: Buffer): void;
  flush(): void;
  settle?(): 'handed' | 'open' | 'idle';
}
type ParserCtor = new (boundary: string, opts: MultipartOptions) => Parser;

class Dice {
  constructor(readonly next: () => number) {}
  /** A whole number in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }
  between(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)] as T;
  }
}

/** One random stream, how it is cut into chunks, and when the consumer calls flush(). */
interface Case {
  boundary: string;
  maxPartSize: number | undefined;
  chunks: Buffer[];
  /** flush() after chunk i. */
  flushAfter: boolean[];
  describe: string;
}

/** Case-, space- and name-variants of the header lines a part may carry. */
const CONTENT_TYPES = ['Content-Type: text/plain', 'content-type:text/plain', 'CONTENT-TYPE:   image/jpeg  ', 'Content-Type: multipart/x; boundary="--ioboundary"'];
const EXTRA_LINES = ['X-Seq: 1', 'X-Seq: 12', 'x-timestamp:\t1700000000 ', 'Content-Disposition: inline', 'X-Empty:', 'X-A:b:c', 'Content-Type: application/octet-stream'];
/** Lines that are no header (a body that starts at once) or nearly one. */
const NOT_HEADERS = ['IO1:H', 'Content: x', 'X-: y', 'x-bad name: 1', 'Content-Type x', ': nothing', 'ContentType: y', 'content-\rtype: z'];

function makeCase(seed: number): Case {
  const d = new Dice(prng(seed));
  const token = d.pick(['ioboundary', 'b', 'my-boundary_1', 'x--y']);
  const declaredWithDashes = d.chance(0.2);
  const boundary = declaredWithDashes ? `--${token}` : token;
  const delimiter = (): string => (declaredWithDashes && d.chance(0.5) ? `----${token}` : `--${token}`);
  const mixedEol = d.chance(0.15);
  const streamEol = d.pick(['\r\n', '\n']);
  const eol = (): string => (mixedEol ? d.pick(['\r\n', '\n']) : streamEol);
  const maxPartSize = d.chance(0.3) ? d.between(1, 120) : undefined;
  // Half the streams have bodies full of framing-like bytes; the others mostly plain ones.
  const hostile = d.chance(0.5);
  /** Bytes that may look like framing: dashes, line breaks, parts of the delimiter, the delimiter itself. */
  const tricky = (length: number): string => {
    let out = '';
    while (out.length < length) {
      const roll = hostile ? d.below(20) : d.chance(0.95) ? 0 : d.below(16);
      if (roll < 8) out += String.fromCharCode(d.between(0x20, 0x7e));
      else if (roll < 10) out += String.fromCharCode(d.below(256));
      else if (roll < 12) out += '-';
      else if (roll < 14) out += d.pick(['\r', '\n', '\r\n']);
      else if (roll < 16) out += `--${token}`.slice(0, d.between(1, token.length + 1));
      else if (roll < 17) out += `\r\n--${token}`;
      else if (roll < 18) out += `--${token}--`;
      else out += d.pick(['IO1:H', ':', 'Content-Length: 3']);
    }
    return out.slice(0, length);
  };
  // A device's parts are mostly of a few lengths (so whole header blocks repeat, Content-Length too).
  // Most streams are steady, as a device's: one way of sending Content-Length, bodies of a few lengths.
  const steady = d.chance(0.6);
  const usual = Array.from({ length: d.between(1, 3) }, () => d.pick([0, 1, 5, d.between(1, 12), d.between(1, 80)]));
  const bodyLength = (): number => (d.chance(steady ? 0.9 : 0.5) ? d.pick(usual) : d.pick([0, 1, 2, d.between(1, 12), d.between(1, 80), d.between(60, 400)]));
  const lengthPolicy = steady ? d.pick([0, 19]) : -1;

  // Header blocks the stream uses again and again (devices repeat one), with Content-Length at one place.
  const templates = Array.from({ length: d.between(1, 3) }, () => {
    const lines = [d.pick(CONTENT_TYPES), ...(d.chance(0.3) ? [d.pick(EXTRA_LINES)] : [])];
    return { lines, lengthAt: d.below(lines.length + 1), lengthName: d.pick(['Content-Length', 'content-length', 'CONTENT-LENGTH']) };
  });
  let template = d.pick(templates);

  let text = '';
  if (d.chance(0.3)) text += tricky(d.between(0, 60));
  const parts = d.pick([0, 1, 2, d.between(1, 8), d.between(5, 30), d.between(5, 30), d.between(20, 60)]);
  for (let i = 0; i < parts; i++) {
    text += delimiter();
    if (d.chance(0.05)) text += d.pick([' ', '--', ' padding', '\t']);
    text += eol();
    if (d.chance(0.1)) template = d.pick(templates);
    const body = tricky(bodyLength());
    const style = steady ? d.below(100) : d.below(20);
    let head = '';
    if (style === 0) {
      // No headers: the body starts on the line after the boundary.
    } else if (style === 1) {
      head = d.pick(NOT_HEADERS) + eol();
    } else {
      if (d.chance(0.05)) head += eol().repeat(d.between(1, 2));
      const lines = [...template.lines];
      const lengthMode = lengthPolicy >= 0 && d.chance(0.95) ? lengthPolicy : d.below(20);
      // Mostly the true length, so that only its digits change from part to part; else none, a wrong one, junk, two.
      if (lengthMode < 10) lines.splice(template.lengthAt, 0, `${template.lengthName}: ${body.length}`);
      else if (lengthMode === 10 || lengthMode === 11) lines.splice(template.lengthAt, 0, `${template.lengthName}: ${Math.max(0, body.length + d.between(-3, 3))}`);
      else if (lengthMode === 12) lines.splice(template.lengthAt, 0, `${template.lengthName}: ${d.pick(['abc', '', ' 5', '1e2', '-1', '99999999999'])}`);
      else if (lengthMode === 13) lines.push(`Content-Length: ${body.length}`, `Content-Length: ${d.pick([body.length, body.length + 1, 'x'])}`);
      if (d.chance(0.03)) lines.push(`X-Long: ${'y'.repeat(d.between(16_360, 16_400))}`);
      head += lines.map((line) => line + eol()).join('');
      if (d.chance(0.05)) head += d.pick(NOT_HEADERS) + eol();
      else head += eol();
    }
    text += head + body;
    if (d.chance(0.9)) text += eol();
    if (d.chance(0.1)) text += eol().repeat(d.between(1, 3));
    if (d.chance(0.03)) text += tricky(d.between(1, 30));
    if (d.chance(0.03)) text += `--${token}--${eol()}`;
  }
  if (d.chance(0.3)) text += `--${token}--${eol()}`;
  if (d.chance(0.2)) text += `--${token}${eol()}`;
  const data = Buffer.from(text, 'latin1');

  // Cuts: anywhere, at every byte, around some boundaries and header blocks, or a few large chunks
  // (where most header blocks lie whole in one chunk, as reuse needs).
  const cutMode = d.pick(data.length < 3_000 ? [0, 1, 2, 2, 3, 3] : [0, 2, 3]);
  const offsets = new Set<number>();
  if (data.length > 1) {
    if (cutMode === 0) {
      for (let i = d.between(0, 40); i > 0; i--) offsets.add(d.between(1, data.length - 1));
    } else if (cutMode === 1) {
      for (let at = 1; at < data.length; at++) offsets.add(at);
    } else if (cutMode === 2) {
      const needle = Buffer.from(`--${token}`, 'latin1');
      for (let at = data.indexOf(needle); at >= 0; at = data.indexOf(needle, at + 1)) {
        if (d.chance(0.3)) offsets.add(at + d.between(-2, needle.length + 40));
      }
    } else {
      for (let at = d.between(1, 300); at < data.length; at += d.between(100, 2_000)) offsets.add(at);
    }
  }
  const cuts = [...offsets].filter((at) => at > 0 && at < data.length).sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, data.length]) {
    chunks.push(Buffer.from(data.subarray(from, at)));
    from = at;
  }
  const flushRate = d.pick([0, 0, 0.2, 1]);
  const flushAfter = chunks.map(() => d.chance(flushRate));
  return { boundary, maxPartSize, chunks, flushAfter, describe: `${data.length} bytes, ${parts} parts, ${chunks.length} chunks, cap ${maxPartSize ?? 'default'}` };
}

/** What a parser did, in order: each part (header entries in order, body bytes) and each warning. */
function record(Ctor: ParserCtor, c: Case, afterChunk?: (parser: Parser, i: number) => void): string[] {
  const events: string[] = [];
  const opts: MultipartOptions = {
    onPart: (part: MultipartPart) => events.push(`part ${JSON.stringify(Object.entries(part.headers))} ${JSON.stringify(part.body.toString('latin1'))}`),
    onWarning: (text) => events.push(`warning ${text}`),
  };
  if (c.maxPartSize !== undefined) opts.maxPartSize = c.maxPartSize;
  const parser = new Ctor(c.boundary, opts);
  c.chunks.forEach((chunk, i) => {
    parser.write(chunk);
    afterChunk?.(parser, i);
    if (c.flushAfter[i]) parser.flush();
  });
  parser.flush();
  return events;
}

/**
 * As the stream supervisor drives the parser: settle() after every chunk. Also returns after
 * which chunks settle() handed a part out, where the reference is then flushed.
 */
function recordSettled(Ctor: ParserCtor, c: Case): { events: string[]; handedAt: boolean[] } {
  const handedAt = c.chunks.map(() => false);
  const events = record(Ctor, { ...c, flushAfter: handedAt }, (parser, i) => {
    if (parser.settle === undefined) throw new Error('the parser has no settle()');
    handedAt[i] = parser.settle() === 'handed';
  });
  return { events, handedAt };
}

/** The first seed from `base` on where `Ctor` differs from the reference, or undefined. */
function firstDifference(Ctor: ParserCtor, base: number, streams: number, settled = false): { seed: number; c: Case; expected: string[]; actual: string[] } | undefined {
  for (let i = 0; i < streams; i++) {
    const seed = (base + i) >>> 0;
    let c = makeCase(seed);
    let actual: string[];
    if (settled) {
      const run = recordSettled(Ctor, c);
      actual = run.events;
      c = { ...c, flushAfter: run.handedAt };
    } else {
      actual = record(Ctor, c);
    }
    const expected = record(ReferenceParser, c);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) return { seed, c, expected, actual };
  }
  return undefined;
}

function envNumber(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : Number(value);
}

/**
 * The compiled parser with one change, loaded as a module of its own: a parser the test must
 * tell apart from the reference (checks that the test can fail).
 */
function mutant(find: string, replace: string): ParserCtor {
  const file = join(__dirname, '..', 'lib', 'cgi', 'multipart.js');
  const source = readFileSync(file, 'utf8');
  assert.ok(source.includes(find), `the mutation point ${JSON.stringify(find)} is no longer in ${file}: update this test`);
  const module = { exports: {} as { MultipartParser?: ParserCtor } };
  new Function('exports', 'module', source.replace(find, replace))(module.exports, module);
  const Ctor = module.exports.MultipartParser;
  assert.ok(Ctor);
  return Ctor;
}

describe('multipart: the parser does what the parser before header reuse did (random streams and cuts)', function () {
  const base = envNumber('MULTIPART_SEED') ?? Math.floor(Math.random() * 2 ** 32);
  const streams = envNumber('MULTIPART_STREAMS') ?? 1_500;
  // A few seconds by default; a slow machine (or a long replay) is no failure.
  this.timeout(Math.max(60_000, streams * 50));

  function assertSame(diff: ReturnType<typeof firstDifference>): void {
    if (diff) {
      const at = diff.actual.findIndex((event, i) => event !== diff.expected[i]);
      assert.fail(
        `seed ${diff.seed} (replay: MULTIPART_SEED=${diff.seed} MULTIPART_STREAMS=1), ${diff.c.describe}: event ${at} differs\n` +
          `expected: ${String(diff.expected[at]).slice(0, 400)}\nactual:   ${String(diff.actual[at]).slice(0, 400)}`,
      );
    }
  }

  it(`${streams} random streams: the same parts, headers, bodies and warnings`, function () {
    assertSame(firstDifference(MultipartParser, base, streams));
  });

  it(`${streams} random streams settled after every chunk, as the stream supervisor does: the reference flushed there does the same`, function () {
    // settle() hands a part out at the end of the chunk that completes it (no timer): it must be
    // the reference's flush() at that place and nothing else.
    assertSame(firstDifference(MultipartParser, base, streams, true));
  });

  it('settle() hands parts out in the random streams, and leaves some open', function () {
    // Without this the test above would prove little.
    let handed = 0;
    let open = 0;
    for (let i = 0; i < 300; i++) {
      const c = makeCase(i);
      const parser = new MultipartParser(c.boundary, { onPart: () => undefined });
      for (const chunk of c.chunks) {
        parser.write(chunk);
        const state = parser.settle();
        if (state === 'handed') handed += 1;
        if (state === 'open') open += 1;
      }
    }
    assert.ok(handed > 200, `${handed} parts handed out by settle()`);
    assert.ok(open > 200, `${open} chunks ending in an open part`);
  });

  it('the generated streams reuse header blocks, change only their Content-Length, and cut inside them', function () {
    // The generator itself: without these the comparison above would prove little.
    let repeated = 0;
    let lengthOnly = 0;
    let cutInBlock = 0;
    for (let i = 0; i < 300; i++) {
      const c = makeCase(i);
      const text = Buffer.concat(c.chunks).toString('latin1');
      const blocks = text.split(/--[\w-]+\r?\n/).map((part) => part.split(/\r?\n\r?\n/)[0] ?? '');
      for (let b = 1; b < blocks.length; b++) {
        if (blocks[b] === blocks[b - 1]) repeated += 1;
        else if (blocks[b]?.replace(/\d+/g, '#') === blocks[b - 1]?.replace(/\d+/g, '#')) lengthOnly += 1;
      }
      let offset = 0;
      for (const chunk of c.chunks.slice(0, -1)) {
        offset += chunk.length;
        const before = text.lastIndexOf('--', offset);
        if (before >= 0 && offset - before < 40 && /ontent-/i.test(text.slice(before, offset + 20))) cutInBlock += 1;
      }
    }
    assert.ok(repeated > 500, `${repeated} repeated header blocks`);
    assert.ok(lengthOnly > 150, `${lengthOnly} header blocks that differ from the last in digits only`);
    assert.ok(cutInBlock > 5_000, `${cutInBlock} cuts near or in a header block`);
  });

  // Each mutant breaks the reuse in one way; the comparison must catch it in the same budget.
  const mutants: Array<[string, string, string]> = [
    [
      'reusing a header block that differs from the last in its digits only (another Content-Length)',
      'if (bytes[from + i] !== data[at + i])',
      'if (bytes[from + i] !== data[at + i] && !(bytes[from + i] >= 0x30 && bytes[from + i] <= 0x39 && data[at + i] >= 0x30 && data[at + i] <= 0x39))',
    ],
    ['reusing the headers of a block but not its Content-Length', 'this.length = last.length;', 'this.length = -1;'],
    ['reusing a block whose last byte differs', 'sameBytes(last.bytes, last.at, data, at, last.size)', 'sameBytes(last.bytes, last.at, data, at, last.size - 1)'],
  ];
  for (const [name, find, replace] of mutants) {
    it(`catches a parser ${name}`, function () {
      // Fixed seeds and the default budget, whatever MULTIPART_SEED and MULTIPART_STREAMS say.
      assert.ok(firstDifference(mutant(find, replace), 1, 1_500), 'the broken parser went unnoticed in 1,500 streams');
    });
  }
});
