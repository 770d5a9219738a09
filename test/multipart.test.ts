import { strict as assert } from 'node:assert';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseIoLines } from '../lib/ops/io';
import { boundaryOf, DEFAULT_MAX_PART, MultipartParser, type MultipartOptions } from '../lib/cgi/multipart';
import { prng } from './helpers';

/** A part as compared across runs: headers and the body as latin1 text (binary safe). */
interface SeenPart {
  headers: Record<string, string>;
  body: string;
}

interface Seen {
  parts: SeenPart[];
  warnings: string[];
}

interface RunOptions {
  maxPartSize?: number;
  /** Call flush() after every chunk (as the supervisor does when the line goes quiet). */
  flushEach?: boolean;
  /** Call flush() after the last chunk (default true: the device never closes its last part). */
  flushEnd?: boolean;
}

function parse(boundary: string, chunks: Buffer[], options: RunOptions = {}): Seen {
  const seen: Seen = { parts: [], warnings: [] };
  const opts: MultipartOptions = {
    onPart: (part) => seen.parts.push({ headers: { ...part.headers }, body: part.body.toString('latin1') }),
    onWarning: (text) => seen.warnings.push(text),
  };
  if (options.maxPartSize !== undefined) opts.maxPartSize = options.maxPartSize;
  const parser = new MultipartParser(boundary, opts);
  for (const chunk of chunks) {
    parser.write(chunk);
    if (options.flushEach) parser.flush();
  }
  if (options.flushEnd !== false) parser.flush();
  return seen;
}

function bodies(seen: Seen): string[] {
  return seen.parts.map((p) => p.body);
}

function bytes(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}

/** Cuts `data` at the given offsets (sorted, inside the buffer) into copies, as sockets deliver them. */
function cut(data: Buffer, offsets: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let from = 0;
  for (const at of [...offsets, data.length]) {
    chunks.push(Buffer.from(data.subarray(from, at)));
    from = at;
  }
  return chunks;
}

function randomOffsets(random: () => number, length: number): number[] {
  const count = 1 + Math.floor(random() * Math.min(40, length));
  const set = new Set<number>();
  for (let i = 0; i < count; i++) set.add(1 + Math.floor(random() * (length - 1)));
  return [...set].sort((a, b) => a - b);
}

function describeCut(offsets: number[]): string {
  return offsets.length > 12 ? `${offsets.length} cuts starting ${offsets.slice(0, 12).join(',')}...` : `cuts at ${offsets.join(',')}`;
}

/**
 * Parses `data` whole, then split at every offset (two chunks), in chunks of 1 to 17 bytes, and
 * at `randomRuns` seeded random splits: every run must give the reference's parts and warnings.
 */
function assertSplitInvariant(boundary: string, data: Buffer, options: RunOptions = {}, randomRuns = 300): Seen {
  const reference = parse(boundary, [data], options);
  const check = (offsets: number[]): void => {
    const seen = parse(boundary, cut(data, offsets), options);
    assert.deepEqual(seen, reference, `different result with ${describeCut(offsets)}`);
  };
  for (let at = 1; at < data.length; at++) check([at]);
  for (let size = 1; size <= 17; size++) {
    const offsets: number[] = [];
    for (let at = size; at < data.length; at += size) offsets.push(at);
    check(offsets);
  }
  const random = prng(0x5eed + data.length);
  for (let run = 0; run < randomRuns; run++) check(randomOffsets(random, data.length));
  return reference;
}

const CT = 'Content-Type: text/plain';

/** A part as the simulator writes it: boundary first, headers, body, line break. */
function part(body: string, eol = '\r\n', headers: string[] = [CT], boundary = 'ioboundary'): string {
  return [`--${boundary}`, ...headers, '', body].join(eol) + eol;
}

// The parser's retained memory is measured with a real GC (tests run without --expose-gc).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function retainedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe('multipart: boundaryOf', () => {
  const cases: Array<[string, string | undefined]> = [
    ['multipart/x-mixed-replace; boundary=ioboundary', 'ioboundary'],
    ['multipart/x-mixed-replace;boundary=--ioboundary', 'ioboundary'],
    ['multipart/x-mixed-replace; boundary="ioboundary"', 'ioboundary'],
    ['multipart/x-mixed-replace; boundary="--myboundary"', 'myboundary'],
    ['multipart/x-mixed-replace; BOUNDARY = ioboundary ; charset=latin1', 'ioboundary'],
    ['multipart/x-mixed-replace; charset=latin1; boundary=a.b_c+d', 'a.b_c+d'],
    ['multipart/x-mixed-replace; boundary="with space"', 'with space'],
    ['multipart/x-mixed-replace', undefined],
    ['multipart/x-mixed-replace; boundary=', undefined],
    ['multipart/x-mixed-replace; boundary=""', undefined],
    ['multipart/x-mixed-replace; boundary=--', undefined],
    ['text/plain', undefined],
    ['', undefined],
  ];
  for (const [contentType, expected] of cases) {
    it(`reads ${JSON.stringify(contentType)} as ${String(expected)}`, () => {
      assert.equal(boundaryOf(contentType), expected);
    });
  }
});

describe('multipart: MultipartParser quirks', () => {
  it('parses CRLF parts with headers, names in lower case and values trimmed', () => {
    const data = part('IO1:H', '\r\n', ['CONTENT-TYPE:   text/plain  ', 'X-Seq: 7']) + part('IO2:L');
    const seen = parse('ioboundary', [bytes(data)]);
    assert.deepEqual(seen.parts, [
      { headers: { 'content-type': 'text/plain', 'x-seq': '7' }, body: 'IO1:H' },
      { headers: { 'content-type': 'text/plain' }, body: 'IO2:L' },
    ]);
    assert.deepEqual(seen.warnings, []);
  });

  it('parses LF-only line endings', () => {
    const data = part('IO1:/', '\n') + part('group=1;level=3;threshold=40;\ngroup=2;level=0;threshold=50;', '\n') + part('IO1:\\', '\n');
    const seen = parse('ioboundary', [bytes(data)]);
    assert.deepEqual(bodies(seen), ['IO1:/', 'group=1;level=3;threshold=40;\ngroup=2;level=0;threshold=50;', 'IO1:\\']);
    assert.equal(seen.parts[0]?.headers['content-type'], 'text/plain');
  });

  it('keeps line breaks inside a body and strips only the framing', () => {
    const body = 'group=1;level=3;threshold=40;\r\n\r\ngroup=2;level=0;threshold=50;';
    assert.deepEqual(bodies(parse('ioboundary', [bytes(part(body) + part('x'))])), [body, 'x']);
  });

  it('skips a preamble, with dashes and a partial boundary in it', () => {
    const preamble = 'HTTP junk\r\n-- not it --\r\n--ioboun\r\n\x00\xff\r\n';
    const seen = parse('ioboundary', [bytes(preamble + part('IO1:H') + part('IO2:H'))]);
    assert.deepEqual(bodies(seen), ['IO1:H', 'IO2:H']);
    assert.deepEqual(seen.warnings, []);
  });

  it('ignores extra blank lines between parts, before headers and after bodies', () => {
    const data = '\r\n\r\n--ioboundary\r\n\r\n\r\nContent-Type: text/plain\r\n\r\nIO1:H\r\n\r\n\r\n\r\n--ioboundary\r\n\r\nIO2:L\r\n\r\n\r\n--ioboundary\n\n\nContent-Type: text/plain\n\nIO1:/\n\n\n';
    const seen = parse('ioboundary', [bytes(data)]);
    assert.deepEqual(bodies(seen), ['IO1:H', 'IO2:L', 'IO1:/']);
    assert.deepEqual(seen.parts[1]?.headers, {});
  });

  it('parses parts without headers (the body starts on the line after the boundary)', () => {
    const data = '--ioboundary\r\nIO1:H\r\n--ioboundary\r\nIO2:/\r\nIO3:L\r\n--ioboundary\r\n';
    assert.deepEqual(bodies(parse('ioboundary', [bytes(data)])), ['IO1:H', 'IO2:/\r\nIO3:L']);
  });

  it('accepts a boundary declared with dashes whether the wire doubles them or not', () => {
    const token = boundaryOf('multipart/x-mixed-replace; boundary=--ioboundary');
    assert.equal(token, 'ioboundary');
    const same = part('IO1:H') + part('IO2:L');
    const doubled = part('IO1:H', '\r\n', [CT], '--ioboundary') + part('IO2:L', '\n', [CT], '--ioboundary');
    assert.deepEqual(bodies(parse(token, [bytes(same)])), ['IO1:H', 'IO2:L']);
    assert.deepEqual(bodies(parse(token, [bytes(doubled)])), ['IO1:H', 'IO2:L']);
    // The parser also takes the token as declared.
    assert.deepEqual(bodies(parse('--ioboundary', [bytes(same)])), ['IO1:H', 'IO2:L']);
  });

  it('needs no Content-Length: bodies are found by scanning for the boundary', () => {
    const seen = parse('ioboundary', [bytes(part('a'.repeat(5000)) + part('b'))]);
    assert.deepEqual(
      seen.parts.map((p) => p.body.length),
      [5000, 1],
    );
    assert.equal(seen.parts[0]?.headers['content-length'], undefined);
  });

  it('takes exactly Content-Length bytes when a boundary follows them (a body may hold the boundary text)', () => {
    const image = '\xff\xd8binary\r\n--ioboundary\r\nnot a part\r\n\xff\xd9';
    const sized = (body: string): string => part(body, '\r\n', ['Content-Type: image/jpeg', `Content-Length: ${body.length}`]);
    const seen = parse('ioboundary', [bytes(sized(image) + sized('IO1:H\r\n') + '\r\n\r\n' + sized('x'))]);
    assert.deepEqual(bodies(seen), [image, 'IO1:H\r\n', 'x']);
    assert.equal(seen.parts[0]?.headers['content-length'], String(image.length));
    assert.deepEqual(seen.warnings, []);
    // Without the header the same image is cut at the boundary text inside it.
    assert.notDeepEqual(bodies(parse('ioboundary', [bytes(part(image))]))[0], image);
  });

  it('resynchronises when Content-Length is too short, too long or not followed by a boundary', () => {
    const short = part('IO1:H', '\r\n', [CT, 'Content-Length: 3']);
    const long = part('IO2:L', '\r\n', [CT, 'Content-Length: 40']);
    const noBoundary = '--ioboundary\r\nContent-Length: 5\r\n\r\nIO3:Hjunk\r\n';
    const seen = parse('ioboundary', [bytes(short + long + part('IO4:L') + noBoundary + part('IO5:H'))]);
    assert.deepEqual(bodies(seen), ['IO1:H', 'IO2:L', 'IO4:L', 'IO3:Hjunk', 'IO5:H']);
    assert.deepEqual(seen.warnings, [
      'Content-Length 3 does not end at a boundary; resynchronising',
      'Content-Length 40 does not end at a boundary; resynchronising',
      'Content-Length 5 does not end at a boundary; resynchronising',
    ]);
  });

  it('never needs a closing boundary; one that comes is ignored and parts may follow it', () => {
    const data = part('IO1:H') + '--ioboundary--\r\n' + part('IO2:H') + part('IO3:H');
    const pending = parse('ioboundary', [bytes(data)], { flushEnd: false });
    // The last part waits for the next boundary (or a flush).
    assert.deepEqual(bodies(pending), ['IO1:H', 'IO2:H']);
    assert.deepEqual(bodies(parse('ioboundary', [bytes(data)])), ['IO1:H', 'IO2:H', 'IO3:H']);
  });

  it('resynchronises at the next boundary after garbage bytes', () => {
    const garbage = '\x00\xff garbage \r\n\x7f\x01 no boundary here \n';
    const data = garbage + part('IO1:H') + garbage + part('IO2:L') + '--ioboundary   trailing junk\r\n' + garbage + 'IO3:H\r\n' + part('IO4:/');
    const seen = parse('ioboundary', [bytes(data)]);
    // Bytes between a part and the next boundary belong to that part (there is nothing else to frame them).
    assert.deepEqual(
      seen.parts.map((p) => parseIoLines(p.body).map((s) => s.port)),
      [[1], [2], [3], [4]],
    );
    assert.equal(seen.parts[0]?.body, `IO1:H\r\n${garbage.slice(0, -1)}`);
    assert.deepEqual(seen.warnings, []);
  });

  it('drops a header line that never ends and finds the next boundary', () => {
    const data = '--ioboundary\r\nContent-Type: ' + 'x'.repeat(40_000) + '\r\n\r\nlost\r\n' + part('IO1:H');
    const seen = parse('ioboundary', [bytes(data)]);
    assert.deepEqual(bodies(seen), ['IO1:H']);
    assert.deepEqual(seen.warnings, ['Header line too long; resynchronising']);
  });

  it('skips a part over the cap (scanned or sized) with a warning and goes on', () => {
    const cap = 16;
    const data =
      part('a'.repeat(16)) +
      part('b'.repeat(17)) +
      part('c') +
      part('d'.repeat(16), '\r\n', [CT, 'Content-Length: 16']) +
      part('e'.repeat(17), '\r\n', [CT, 'Content-Length: 17']) +
      part('f');
    const seen = parse('ioboundary', [bytes(data)], { maxPartSize: cap });
    assert.deepEqual(bodies(seen), ['a'.repeat(16), 'c', 'd'.repeat(16), 'f']);
    assert.deepEqual(seen.warnings, ['A part is larger than the 16 byte cap; skipped to the next boundary', 'A part is larger than the 16 byte cap; skipped to the next boundary']);
  });

  it('caps parts at 1 MiB by default', () => {
    assert.equal(DEFAULT_MAX_PART, 1024 * 1024);
    const data = Buffer.concat([bytes(part('x'.repeat(DEFAULT_MAX_PART))), bytes(part('y'.repeat(DEFAULT_MAX_PART + 1))), bytes(part('z'))]);
    const chunks = cut(
      data,
      Array.from({ length: Math.floor(data.length / 65536) }, (_, i) => (i + 1) * 65536),
    );
    const seen = parse('ioboundary', chunks);
    assert.deepEqual(
      seen.parts.map((p) => [p.body[0], p.body.length]),
      [
        ['x', DEFAULT_MAX_PART],
        ['z', 1],
      ],
    );
    assert.equal(seen.warnings.length, 1);
    assert.match(seen.warnings[0] ?? '', /1048576 byte cap/);
  });

  it('hands out a part that lies inside one chunk as a view, without a copy', () => {
    const chunk = bytes(part('IO1:H') + part('IO2:L'));
    let body: Buffer | undefined;
    const parser = new MultipartParser('ioboundary', { onPart: (p) => (body ??= p.body) });
    parser.write(chunk);
    assert.ok(body);
    assert.equal(body.buffer, chunk.buffer);
  });
});

describe('multipart: flush()', () => {
  it('hands out a complete-looking text part before the next boundary; later bytes form their own part', () => {
    const got: string[] = [];
    const parser = new MultipartParser('ioboundary', { onPart: (p) => got.push(p.body.toString('latin1')) });
    parser.write(bytes(part('IO1:H')));
    assert.deepEqual(got, []);
    parser.flush();
    assert.deepEqual(got, ['IO1:H']);
    parser.flush();
    assert.deepEqual(got, ['IO1:H'], 'a second flush hands out nothing');
    // More bytes before the boundary, then blank lines, then the next part.
    parser.write(bytes('IO2:L\r\n'));
    parser.flush();
    parser.write(bytes('\r\n\r\n'));
    parser.flush();
    parser.write(bytes(part('IO3:/')));
    parser.write(bytes(part('IO4:\\')));
    assert.deepEqual(got, ['IO1:H', 'IO2:L', 'IO3:/']);
    parser.flush();
    assert.deepEqual(got, ['IO1:H', 'IO2:L', 'IO3:/', 'IO4:\\']);
  });

  it('waits for the end of the line of a text part', () => {
    const got: string[] = [];
    const parser = new MultipartParser('ioboundary', { onPart: (p) => got.push(p.body.toString('latin1')) });
    parser.write(bytes('--ioboundary\r\nContent-Type: text/plain\r\n\r\nIO1:'));
    parser.flush();
    parser.write(bytes('H\r'));
    parser.flush();
    assert.deepEqual(got, []);
    parser.write(bytes('\n--ioboun'));
    parser.flush();
    assert.deepEqual(got, [], 'the tail might be the start of a boundary');
    parser.write(bytes('dary\r\nIO2:L\n'));
    assert.deepEqual(got, ['IO1:H']);
    parser.flush();
    assert.deepEqual(got, ['IO1:H', 'IO2:L']);
  });

  it('hands out a sized part once all its bytes are in, and not again when the boundary comes', () => {
    const got: string[] = [];
    const warnings: string[] = [];
    const parser = new MultipartParser('ioboundary', { onPart: (p) => got.push(p.body.toString('latin1')), onWarning: (t) => warnings.push(t) });
    parser.write(bytes('--ioboundary\r\nContent-Length: 10\r\n\r\n0123'));
    parser.flush();
    assert.deepEqual(got, [], 'a sized part needs all its bytes');
    parser.write(bytes('456789'));
    parser.flush();
    assert.deepEqual(got, ['0123456789']);
    parser.write(bytes('\r\n\r\n--ioboundary\r\nContent-Length: 2\r\n\r\nab\r\n--ioboundary\r\n'));
    assert.deepEqual(got, ['0123456789', 'ab']);
    // Flushed, then the bytes after it are not a boundary: a warning, and the next part is found.
    parser.write(bytes('Content-Length: 2\r\n\r\ncd'));
    parser.flush();
    parser.write(bytes('junk\r\n' + part('IO1:H')));
    parser.flush();
    assert.deepEqual(got, ['0123456789', 'ab', 'cd', 'IO1:H']);
    assert.deepEqual(warnings, ['Content-Length 2 does not end at a boundary; resynchronising']);
  });

  const streams: Array<[string, string]> = [
    ['CRLF', [part('IO1:H'), part('IO2:L'), part('IO1:/'), part('IO2:/'), part('IO1:\\')].join('')],
    ['LF', [part('IO1:H', '\n'), part('IO2:L', '\n'), part('IO1:/', '\n'), part('IO2:\\', '\n')].join('')],
    ['blank lines', [part('IO1:H') + '\r\n\r\n', part('IO2:L', '\n') + '\n\n\n', part('IO1:/') + '\r\n'].join('')],
    ['Content-Length', ['IO1:H', 'IO2:L', 'IO1:/'].map((b) => part(b, '\r\n', [CT, `Content-Length: ${b.length}`]) + '\r\n').join('')],
    ['no headers', '--ioboundary\r\nIO1:H\r\n--ioboundary\r\nIO2:L\r\n--ioboundary\r\n\r\nIO1:/\r\n'],
  ];
  for (const [name, text] of streams) {
    it(`loses and repeats nothing when flushed after every chunk, at every split (${name})`, () => {
      const data = bytes(text);
      const reference = parse('ioboundary', [data]);
      assert.ok(reference.parts.length >= 3);
      const check = (offsets: number[]): void => {
        const seen = parse('ioboundary', cut(data, offsets), { flushEach: true });
        assert.deepEqual(bodies(seen), bodies(reference), `different parts with ${describeCut(offsets)}`);
        assert.deepEqual(seen.warnings, []);
      };
      for (let at = 1; at < data.length; at++) check([at]);
      for (let a = 1; a < data.length; a += 3) for (let b = a + 1; b < data.length; b += 2) check([a, b]);
      const random = prng(42);
      for (let run = 0; run < 300; run++) check(randomOffsets(random, data.length));
    });
  }
});

describe('multipart: the same bytes split anywhere give the same parts and warnings', () => {
  const garbage = '\x00\xff garbage \r\n\x7f\x01 no boundary here \n';
  const sized = (body: string, length = body.length): string => part(body, '\r\n', [CT, `Content-Length: ${length}`]);

  it('a stream with every quirk (cap 64)', function () {
    this.timeout(60_000);
    const text = [
      'preamble -- --ioboun\r\n',
      part('IO1:H'),
      '\r\n\r\n',
      part('IO2:L', '\n'),
      '--ioboundary\r\n\r\n\r\nIO1:/\r\n',
      garbage,
      part('g'.repeat(64)),
      '\r\n\r\n\r\n\r\n',
      part('h'.repeat(65)),
      part('i'.repeat(63) + '\n'),
      sized('\xff\xd8--ioboundary\r\n\xff\xd9'),
      '\r\n',
      sized('IO1:H', 3),
      sized('IO2:L', 40),
      sized('j'.repeat(64)),
      sized('k'.repeat(65)),
      '--ioboundary--\r\n',
      part('IO2:/', '\r\n', [CT, 'X-Extra: 1']),
      '--ioboundary\r\nContent-Length: 5\r\n\r\nIO3:Hjunk\r\n',
      part('l'.repeat(200)),
      part('IO1:\\') + '\n\n',
    ].join('');
    const reference = assertSplitInvariant('ioboundary', bytes(text), { maxPartSize: 64 });
    assert.deepEqual(bodies(reference), [
      'IO1:H',
      'IO2:L',
      `IO1:/\r\n${garbage.slice(0, -1)}`,
      'g'.repeat(64),
      'i'.repeat(63),
      '\xff\xd8--ioboundary\r\n\xff\xd9',
      'IO1:H',
      'IO2:L',
      'j'.repeat(64),
      'IO2:/',
      'IO3:Hjunk',
      'IO1:\\',
    ]);
    const cap = 'A part is larger than the 64 byte cap; skipped to the next boundary';
    const lie = (n: number): string => `Content-Length ${n} does not end at a boundary; resynchronising`;
    assert.deepEqual(reference.warnings, [cap, lie(3), lie(40), cap, lie(5), cap]);
  });

  it('LF-only with the boundary doubled and blank lines (cap 32)', function () {
    this.timeout(60_000);
    const text = [part('IO1:L', '\n', [CT], '--ioboundary'), '\n\n', part('x'.repeat(32), '\n', [CT], '--ioboundary'), '\n\n\n', part('y'.repeat(33), '\n', [], '--ioboundary'), part('IO2:H', '\n', [], '--ioboundary')].join('');
    const reference = assertSplitInvariant('ioboundary', bytes(text), { maxPartSize: 32 });
    assert.deepEqual(bodies(reference), ['IO1:L', 'x'.repeat(32), 'IO2:H']);
    assert.equal(reference.warnings.length, 1);
  });

  it('a header line that never ends, cut anywhere near the limit', function () {
    this.timeout(60_000);
    const text = '--ioboundary\r\nContent-Type: ' + 'x'.repeat(16_370) + '\r\n\r\nlost\r\n' + part('IO1:H') + '--ioboundary\r\nX-Long: ' + 'y'.repeat(16_360) + '\r\n\r\nkept\r\n' + part('IO2:H');
    const data = bytes(text);
    const reference = parse('ioboundary', [data]);
    assert.deepEqual(bodies(reference), ['IO1:H', 'kept', 'IO2:H']);
    assert.deepEqual(reference.warnings, ['Header line too long; resynchronising']);
    // Every cut from just before the first limit to past it, then a stride over the rest.
    for (let at = 1; at < data.length; at += at > 16_300 && at < 16_450 ? 1 : 97) {
      assert.deepEqual(parse('ioboundary', cut(data, [at])), reference, `cut at ${at}`);
    }
    const random = prng(7);
    for (let run = 0; run < 50; run++) {
      const offsets = randomOffsets(random, data.length);
      assert.deepEqual(parse('ioboundary', cut(data, offsets)), reference, describeCut(offsets));
    }
  });

  it('every split into three chunks of a short IO stream', function () {
    this.timeout(60_000);
    const data = bytes(part('IO1:H') + '\r\n' + part('IO2:L', '\n') + part('IO1:/', '\r\n', [CT, 'Content-Length: 5']) + part('IO1:\\'));
    const reference = parse('ioboundary', [data]);
    assert.deepEqual(bodies(reference), ['IO1:H', 'IO2:L', 'IO1:/', 'IO1:\\']);
    for (let a = 1; a < data.length; a++) {
      for (let b = a + 1; b < data.length; b++) {
        assert.deepEqual(parse('ioboundary', cut(data, [a, b])), reference, `cuts at ${a},${b}`);
      }
    }
  });
});

describe('multipart: memory is bounded by the cap whatever the input', function () {
  this.timeout(60_000);
  const MiB = 1024 * 1024;
  const TOTAL = 50 * MiB;
  const CHUNK = 64 * 1024;

  /** Feeds `total` bytes of `fill` in fresh 64 KB chunks after `head`; returns growth of retained memory. */
  function feed(head: string, fill: number, options: { maxPartSize?: number } = {}): { growth: number; seen: Seen; parser: MultipartParser } {
    const seen: Seen = { parts: [], warnings: [] };
    const opts: MultipartOptions = {
      onPart: (p) => seen.parts.push({ headers: p.headers, body: `${p.body.length}` }),
      onWarning: (t) => seen.warnings.push(t),
    };
    if (options.maxPartSize !== undefined) opts.maxPartSize = options.maxPartSize;
    const parser = new MultipartParser('ioboundary', opts);
    const before = retainedBytes();
    parser.write(bytes(head));
    let peak = 0;
    for (let sent = 0; sent < TOTAL; sent += CHUNK) {
      // A fresh buffer each time: a parser that kept views of them would keep them all alive.
      parser.write(Buffer.alloc(CHUNK, fill));
      if (sent % (8 * MiB) === 0) peak = Math.max(peak, retainedBytes() - before);
    }
    peak = Math.max(peak, retainedBytes() - before);
    return { growth: peak, seen, parser };
  }

  function assertRecovers(parser: MultipartParser, seen: Seen): void {
    parser.write(bytes('\r\n' + part('IO1:H') + part('IO2:L')));
    assert.deepEqual(seen.parts.at(-1)?.body, '5');
  }

  it('a part with no boundary for 50 MiB (default 1 MiB cap)', () => {
    const { growth, seen, parser } = feed(part('start').replace(/start\r\n$/, ''), 0x58);
    assert.deepEqual(seen.parts, [], 'no part over the cap is handed out');
    assert.equal(seen.warnings.length, 1);
    assert.ok(growth < DEFAULT_MAX_PART + 4 * MiB, `retained ${growth} bytes`);
    assertRecovers(parser, seen);
  });

  it('a part with no boundary for 50 MiB (cap 64 KB)', () => {
    const { growth, seen, parser } = feed(part('start').replace(/start\r\n$/, ''), 0x0a, { maxPartSize: 64 * 1024 });
    assert.deepEqual(seen.parts, []);
    assert.equal(seen.warnings.length, 1);
    assert.ok(growth < 64 * 1024 + 4 * MiB, `retained ${growth} bytes`);
    assertRecovers(parser, seen);
  });

  it('a sized part of 50 MiB declared by Content-Length', () => {
    const { growth, seen, parser } = feed(`--ioboundary\r\nContent-Length: ${TOTAL}\r\n\r\n`, 0x59);
    assert.deepEqual(seen.parts, []);
    assert.equal(seen.warnings.length, 1);
    assert.ok(growth < 4 * MiB, `retained ${growth} bytes`);
    assertRecovers(parser, seen);
  });

  it('50 MiB of bytes before any boundary, or in a header line', () => {
    for (const head of ['', '--ioboundary\r\nContent-Type: ']) {
      const { growth, seen, parser } = feed(head, 0x2d);
      assert.deepEqual(seen.parts, []);
      assert.ok(growth < 4 * MiB, `retained ${growth} bytes after ${JSON.stringify(head)}`);
      assertRecovers(parser, seen);
    }
  });

  it('50 MiB of header lines, each with a name of its own', () => {
    const seen: Seen = { parts: [], warnings: [] };
    const parser = new MultipartParser('ioboundary', { onPart: (p) => seen.parts.push({ headers: p.headers, body: `${p.body.length}` }), onWarning: (t) => seen.warnings.push(t) });
    const before = retainedBytes();
    parser.write(bytes('--ioboundary\r\n'));
    let peak = 0;
    let name = 0;
    for (let sent = 0; sent < TOTAL; ) {
      const lines: string[] = [];
      for (let size = 0; size < CHUNK; name++) {
        const line = `X-${name}: v\r\n`;
        lines.push(line);
        size += line.length;
      }
      const chunk = bytes(lines.join(''));
      parser.write(chunk);
      sent += chunk.length;
      if (name % 200_000 < lines.length) peak = Math.max(peak, retainedBytes() - before);
    }
    peak = Math.max(peak, retainedBytes() - before);
    assert.deepEqual(seen.parts, []);
    assert.deepEqual(seen.warnings, ['Header block too long; resynchronising']);
    assert.ok(peak < 4 * MiB, `retained ${peak} bytes`);
    assertRecovers(parser, seen);
  });

  it('a Content-Length followed by 50 MiB that are not a boundary', () => {
    const { growth, seen, parser } = feed('--ioboundary\r\nContent-Length: 2\r\n\r\nab', 0x0d);
    assert.ok(seen.parts.every((p) => Number(p.body) <= DEFAULT_MAX_PART));
    assert.ok(growth < DEFAULT_MAX_PART + 4 * MiB, `retained ${growth} bytes`);
    assertRecovers(parser, seen);
  });
});
