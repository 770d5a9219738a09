/**
 * Streaming parser for `multipart/x-mixed-replace` as these devices send it (field notes):
 * boundary declared with or without leading `--`, CRLF or LF, a preamble, blank lines between
 * parts, parts with or without headers and `Content-Length`, no closing boundary ever.
 *
 * Bytes are searched with Buffer.indexOf (native) past the first few. A part body that lies in
 * one buffer is handed out as a view of it (the chunk, or the chunk joined to the few bytes kept
 * from the one before), with no copy; a body that spans chunks is copied once. Memory is bounded
 * by the part size cap whatever the input: an oversized part is skipped to the next boundary.
 *
 * A device sends the same header block before every part: when the bytes of a block are those of
 * the last block parsed, its parsed headers are taken again instead of parsing the lines anew (on
 * small parts that parse was most of the work). Each part still gets its own headers object.
 */
export interface MultipartPart {
  /** Header names in lower case. The part's own object: changing it changes no other part. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface MultipartOptions {
  onPart(part: MultipartPart): void;
  onWarning?(text: string): void;
  /** Largest part kept (default 1 MiB); larger ones are skipped with a warning. */
  maxPartSize?: number;
}

export const DEFAULT_MAX_PART = 1024 * 1024;
const MAX_HEADER_BYTES = 16 * 1024;
/** Header lines of one part, in bytes: each distinct name is kept, so their number needs a bound too. */
const MAX_HEADER_BLOCK = 64 * 1024;
/** A header block longer than this is not kept for reuse: camera blocks are tens of bytes. */
const MAX_REUSED_BLOCK = 2 * 1024;
/**
 * Line breaks and dashes around a scanned body (blank lines, the break before the boundary) do
 * not count against the cap, up to this many bytes: whether a part is kept must not depend on
 * where the chunks were cut.
 */
const FRAMING_SLACK = MAX_HEADER_BYTES;
const LF = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;
const EMPTY = Buffer.alloc(0);
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The last header block parsed, to be taken again when the next block has the same bytes. */
interface HeaderBlock {
  /**
   * Holds the block, from the line after the boundary to the blank line that ends the headers
   * included, at `at`.
   */
  bytes: Buffer;
  at: number;
  size: number;
  /** `bytes` is the buffer being parsed (no copy per part) until write() returns; then a copy of the block alone. */
  pinned: boolean;
  /** Never handed out: each part gets a copy. */
  headers: Readonly<Record<string, string>>;
  length: number;
}

/** The boundary token of a Content-Type, quotes and leading dashes removed; undefined if none. */
export function boundaryOf(contentType: string): string | undefined {
  const match = /boundary\s*=\s*("([^"]*)"|[^;,\s]+)/i.exec(contentType);
  const raw = match ? (match[2] ?? match[1] ?? '') : '';
  const token = raw.replace(/^-+/, '');
  return token === '' ? undefined : token;
}

type State = 'seek' | 'delimiter' | 'headers' | 'body' | 'verify' | 'skip';

export class MultipartParser {
  private readonly needle: Buffer;
  private readonly maxPart: number;
  private state: State = 'seek';
  /** Bytes of the previous chunk the current state still needs; small except right after a resync. */
  private carry: Buffer = EMPTY;
  /** Headers of the current part, never handed out (each part gets a copy): they may be reused. */
  private headers: Readonly<Record<string, string>> = NO_HEADERS;
  /** Headers being read, until the body starts. */
  private building: Record<string, string> | undefined;
  private sawHeader = false;
  /** Bytes of header lines of the current part (MAX_HEADER_BLOCK). */
  private headerBytes = 0;
  /** Where the current header block began, when in the buffer now being parsed (else undefined). */
  private blockData: Buffer | undefined;
  private blockStart = 0;
  private lastBlock: HeaderBlock | undefined;
  /** Content-Length of the current part, or -1 to scan for the boundary. */
  private length = -1;
  /**
   * Body bytes of the current part from earlier chunks while they are one piece: `piece` from
   * `pieceStart` to `pieceEnd` (no list and no view made per part).
   */
  private piece: Buffer | undefined;
  private pieceStart = 0;
  private pieceEnd = 0;
  /** Body bytes of the current part from earlier chunks, once they are two pieces or more. */
  private pieces: Buffer[] = [];
  private piecesLength = 0;
  /** A sized part already handed out by `flush()`, its boundary not yet seen. */
  private flushed = false;
  /** Body bytes of the current scanned part came in an earlier chunk: the part is not one write of the device. */
  private carried = false;

  constructor(
    boundary: string,
    private readonly opts: MultipartOptions,
  ) {
    this.needle = Buffer.from(`--${boundary.replace(/^-+/, '')}`, 'latin1');
    this.maxPart = opts.maxPartSize ?? DEFAULT_MAX_PART;
  }

  write(chunk: Buffer): void {
    this.carried = this.state === 'body' && this.length < 0 && this.piecesLength + this.carry.length > 0;
    let data = this.carry.length === 0 ? chunk : this.joinCarry(chunk);
    this.carry = EMPTY;
    let pos = 0;
    for (;;) {
      const next = this.step(data, pos);
      if (next === NEED_MORE) {
        // A block that goes on in the next buffer is not one run of bytes to keep for reuse.
        this.blockData = undefined;
        // The kept block must not pin the chunk it lies in.
        const last = this.lastBlock;
        if (last?.pinned) {
          last.bytes = Buffer.from(last.bytes.subarray(last.at, last.at + last.size));
          last.at = 0;
          last.pinned = false;
        }
        return;
      }
      if (typeof next === 'number') pos = next;
      else [data, pos] = [next, 0];
    }
  }

  /**
   * While scanning a body the carry is only a tail that might hold the start of a boundary. When
   * the chunk is long enough to settle that on a small probe, the chunk is not copied.
   */
  private joinCarry(chunk: Buffer): Buffer {
    const scanning = (this.state === 'body' && this.length < 0) || this.state === 'skip';
    if (scanning && chunk.length >= this.needle.length + 2) {
      const probe = Buffer.concat([this.carry, chunk.subarray(0, this.needle.length + 2)]);
      if (probe.indexOf(this.needle) < 0) {
        if (this.state === 'body') this.takeBody(this.carry);
        return chunk;
      }
    }
    return Buffer.concat([this.carry, chunk]);
  }

  /**
   * Hands out a part that looks complete although its closing boundary has not arrived: devices
   * send the boundary before each part, so without this a part would wait for the next event.
   * True when it took the part out (handed out, or dropped for its size).
   * Call it when the connection has gone quiet (settle() does at the end of a chunk where that
   * is safe). A sized part must have all its bytes; a scanned text part must end with a line
   * break. Bytes that still follow before the boundary form a part of their own, so nothing is lost.
   */
  flush(): boolean {
    if (this.state === 'verify' && !this.flushed) {
      this.flushed = true;
      this.emit(EMPTY, 0, 0, false);
      return true;
    }
    if (this.state !== 'body' || this.length >= 0) return false;
    const tail = this.carry;
    if (this.piecesLength + tail.length === 0 || (tail.length > 0 ? tail[tail.length - 1] : this.lastPieceByte()) !== LF) return false;
    this.carry = EMPTY;
    this.emit(tail, 0, tail.length, true);
    return true;
  }

  /**
   * After each chunk, in place of a timer per part: hands out the part the chunk completed.
   * A sized part is complete once its Content-Length is in. A scanned part is complete when it
   * came whole in this chunk and ends with a line break: devices write a part (boundary first)
   * in one go. A scanned part whose bytes began in an earlier chunk (a device that drips) is
   * left open: only quiet time tells it is complete, so the caller flushes after a pause then.
   *
   * `handed`: the part was taken out as flush() does (handed out, or dropped for its size);
   * `open`: a part is open that a later flush() may hand out; `idle`: neither.
   */
  settle(): 'handed' | 'open' | 'idle' {
    const whole = this.state === 'verify' || (this.state === 'body' && this.length < 0 && !this.carried);
    if (whole && this.flush()) return 'handed';
    return this.state === 'body' && this.length < 0 && this.piecesLength + this.carry.length > 0 ? 'open' : 'idle';
  }

  private lastPieceByte(): number | undefined {
    if (this.piece !== undefined) return this.piece[this.pieceEnd - 1];
    const last = this.pieces[this.pieces.length - 1];
    return last?.[last.length - 1];
  }

  /**
   * data.indexOf(needle, from). Small parts end a few bytes on, where a loop here finds the
   * boundary sooner than a call into the native search; longer runs go to the native search.
   */
  private find(data: Buffer, from: number): number {
    const needle = this.needle;
    const last = data.length - needle.length;
    const stop = Math.min(from + SHORT_SCAN, last);
    next: for (let at = from; at <= stop; at++) {
      if (data[at] !== DASH || data[at + 1] !== DASH) continue;
      for (let i = 2; i < needle.length; i++) if (data[at + i] !== needle[i]) continue next;
      return at;
    }
    return stop === last ? -1 : data.indexOf(needle, stop + 1);
  }

  /** Runs the state machine from `pos`: where to go on, a new buffer to go on in, or NEED_MORE. */
  private step(data: Buffer, pos: number): number | Buffer {
    switch (this.state) {
      case 'seek':
      case 'skip':
        return this.seek(data, pos);
      case 'delimiter':
        return this.delimiterLine(data, pos);
      case 'headers':
        return this.headerLine(data, pos);
      case 'body':
        return this.length >= 0 ? this.sizedBody(data, pos) : this.scannedBody(data, pos);
      case 'verify':
        return this.verify(data, pos);
    }
  }

  private seek(data: Buffer, pos: number): number {
    const at = this.find(data, pos);
    if (at < 0) return this.keepTail(data, this.tailFrom(data, pos));
    this.state = 'delimiter';
    return at + this.needle.length;
  }

  /** The rest of the boundary line: `--` closes (devices may go on anyway), anything else is padding. */
  private delimiterLine(data: Buffer, pos: number): number {
    const first = data[pos];
    const lf = first === LF ? pos : first === CR && data[pos + 1] === LF ? pos + 1 : lineEnd(data, pos);
    if (lf < 0) return this.waitForLine(data, pos);
    this.state = 'headers';
    const at = lf + 1;
    const last = this.lastBlock;
    if (last !== undefined && data.length - at >= last.size && sameBytes(last.bytes, last.at, data, at, last.size)) {
      // The same bytes would parse to the same headers, length and start of the body.
      this.headers = last.headers;
      this.building = undefined;
      this.sawHeader = true;
      this.length = last.length;
      this.startBody();
      return at + last.size;
    }
    this.headers = NO_HEADERS;
    this.building = undefined;
    this.sawHeader = false;
    this.headerBytes = 0;
    this.length = -1;
    this.blockData = data;
    this.blockStart = at;
    return at;
  }

  private headerLine(data: Buffer, pos: number): number {
    const lf = lineEnd(data, pos);
    if (lf < 0) return this.waitForLine(data, pos);
    const end = lf > pos && data[lf - 1] === CR ? lf - 1 : lf;
    if (end === pos) {
      // A blank line ends the headers; before any header it is one of the extra blank lines.
      if (this.sawHeader) {
        this.startBody();
        this.keepBlock(data, lf + 1);
      }
      return lf + 1;
    }
    const colon = headerNameEnd(data, pos, end);
    if (colon > 0) {
      this.headerBytes += lf + 1 - pos;
      if (this.headerBytes > MAX_HEADER_BLOCK) {
        this.warn('Header block too long; resynchronising');
        this.state = 'seek';
        return lf + 1;
      }
      const name = data.toString('latin1', pos, colon).toLowerCase();
      const value = data.toString('latin1', colon + 1, end).trim();
      (this.building ??= {})[name] = value;
      this.sawHeader = true;
      if (name === 'content-length' && /^\d+$/.test(value)) this.length = Number(value);
      return lf + 1;
    }
    // Not a header: a part without headers, its body starts on this line.
    this.startBody();
    return pos;
  }

  /** Keeps the block that just ended for reuse, when all of it lies in `data`. */
  private keepBlock(data: Buffer, end: number): void {
    if (this.blockData !== data || end - this.blockStart > MAX_REUSED_BLOCK) return;
    this.lastBlock = { bytes: data, at: this.blockStart, size: end - this.blockStart, pinned: true, headers: this.headers, length: this.length };
  }

  private startBody(): void {
    this.carried = false;
    if (this.building !== undefined) {
      this.headers = this.building;
      this.building = undefined;
    }
    this.state = 'body';
    this.dropPieces();
    if (this.length > this.maxPart) this.startSkip();
  }

  /** Fast path: Content-Length bytes, kept only if a boundary really follows them (see verify). */
  private sizedBody(data: Buffer, pos: number): number {
    const need = this.length - this.piecesLength;
    if (data.length - pos < need) {
      this.takeBody(data, pos);
      return NEED_MORE;
    }
    this.takeBody(data, pos, pos + need);
    this.state = 'verify';
    this.flushed = false;
    return pos + need;
  }

  /** After a sized body: line breaks, then the boundary line (its dashes may be doubled). */
  private verify(data: Buffer, pos: number): number | Buffer {
    let at = pos;
    while (at < data.length && (data[at] === CR || data[at] === LF)) at++;
    let dashes = at;
    while (dashes < data.length && data[dashes] === DASH) dashes++;
    const start = dashes - 2;
    // Judged on the bytes seen so far the same way as on the whole stream: a gap that is too long
    // now stays too long.
    if (dashes - pos > MAX_HEADER_BYTES) return this.resync(data, pos);
    if (dashes === data.length || data.length - start < this.needle.length) return this.keepTail(data, pos);
    if (start < at || !sameBytes(this.needle, 0, data, start, this.needle.length)) return this.resync(data, pos);
    if (!this.flushed) this.emit(EMPTY, 0, 0, false);
    this.state = 'delimiter';
    return start + this.needle.length;
  }

  /** Content-Length lied: scan the part's bytes again for the boundary. */
  private resync(data: Buffer, pos: number): Buffer {
    this.warn(`Content-Length ${this.length} does not end at a boundary; resynchronising`);
    if (this.flushed) {
      // Already handed out by length: look for the next boundary from here.
      this.state = 'seek';
      return data.subarray(pos);
    }
    const again = Buffer.concat([...this.bodyPieces(), data.subarray(pos)]);
    this.dropPieces();
    this.length = -1;
    this.state = 'body';
    return again;
  }

  private scannedBody(data: Buffer, pos: number): number {
    const at = this.find(data, pos);
    if (at < 0) {
      // Keep the tail that could be the start of a boundary; the rest is body for sure.
      const keepFrom = this.tailFrom(data, pos);
      this.takeBody(data, pos, keepFrom);
      if (this.piecesLength > this.maxPart + FRAMING_SLACK) {
        this.startSkip();
        return keepFrom;
      }
      return this.keepTail(data, keepFrom);
    }
    this.emit(data, pos, at, true);
    this.state = 'delimiter';
    return at + this.needle.length;
  }

  /**
   * Where the bytes that could be the start of a boundary cut by the chunk's end begin (the end
   * when there are none). Such a start is a dash among the last bytes: a part that ends in a line
   * break (every detection reading) keeps nothing back, so that the chunk that brought it hands it
   * out as a view of that chunk, with no copy of a tail and no join.
   */
  private tailFrom(data: Buffer, pos: number): number {
    const dash = data.indexOf(DASH, Math.max(pos, data.length - this.needle.length + 1));
    return dash < 0 ? data.length : dash;
  }

  private startSkip(): void {
    this.tooLarge();
    this.dropPieces();
    this.state = 'skip';
  }

  private dropPieces(): void {
    this.piece = undefined;
    if (this.pieces.length > 0) this.pieces = [];
    this.piecesLength = 0;
  }

  private bodyPieces(): Buffer[] {
    return this.piece === undefined ? this.pieces : [this.piece.subarray(this.pieceStart, this.pieceEnd)];
  }

  private takeBody(data: Buffer, from = 0, to = data.length): void {
    if (to <= from) return;
    if (this.piecesLength === 0) {
      this.piece = data;
      this.pieceStart = from;
      this.pieceEnd = to;
    } else {
      if (this.piece !== undefined) this.pieces = this.bodyPieces();
      this.piece = undefined;
      this.pieces.push(data.subarray(from, to));
    }
    this.piecesLength += to - from;
  }

  /**
   * Hands out the part: the pieces kept from earlier chunks joined to `data` from `from` to `to`,
   * without its framing when it was scanned for. One view of one buffer: a body that lies in one
   * chunk is not copied.
   */
  private emit(data: Buffer, from: number, to: number, scanned: boolean): void {
    let raw = data;
    let start = from;
    let end = to;
    if (this.piecesLength > 0 && to === from && this.piece !== undefined) {
      // The usual part: its bytes all came in the chunk before its boundary.
      raw = this.piece;
      start = this.pieceStart;
      end = this.pieceEnd;
    } else if (this.piecesLength > 0) {
      raw = Buffer.concat(to > from ? [...this.bodyPieces(), data.subarray(from, to)] : this.bodyPieces(), this.piecesLength + to - from);
      start = 0;
      end = raw.length;
    }
    this.dropPieces();
    const rawLength = end - start;
    if (scanned) {
      // The framing: the line break before the boundary, dashes that belong to the boundary line
      // (`----token` when the declared boundary carried `--`), extra blank lines.
      let dashes = end;
      while (dashes > start && raw[dashes - 1] === DASH) dashes--;
      if (dashes < end && (dashes === start || raw[dashes - 1] === LF)) end = dashes;
      while (start < end && (raw[start] === CR || raw[start] === LF)) start++;
      while (end > start && (raw[end - 1] === CR || raw[end - 1] === LF)) end--;
      // Blank lines between parts (or after a flushed part) carry nothing.
      if (end === start) return;
    }
    // The same rule as while scanning (scannedBody), so that a part is kept or not wherever the chunks were cut.
    if (end - start > this.maxPart || rawLength > this.maxPart + FRAMING_SLACK) return this.tooLarge();
    this.opts.onPart({ headers: { ...this.headers }, body: start === 0 && end === raw.length ? raw : raw.subarray(start, end) });
  }

  private tooLarge(): void {
    this.warn(`A part is larger than the ${this.maxPart} byte cap; skipped to the next boundary`);
  }

  /** A line that does not end in reasonable room is garbage: look for the next boundary. */
  private waitForLine(data: Buffer, pos: number): number {
    if (data.length - pos > MAX_HEADER_BYTES) {
      this.warn('Header line too long; resynchronising');
      this.state = 'seek';
      return pos + 1;
    }
    return this.keepTail(data, pos);
  }

  /** Keeps bytes for the next chunk, copied so that a small tail does not pin a large chunk. */
  private keepTail(data: Buffer, from: number): typeof NEED_MORE {
    this.carry = from >= data.length ? EMPTY : Buffer.from(data.subarray(from));
    return NEED_MORE;
  }

  private warn(text: string): void {
    this.opts.onWarning?.(text);
  }
}

const NEED_MORE = -1;
/** Bytes searched for a boundary before the native search takes over (see find). */
const SHORT_SCAN = 64;

/** Whether `size` bytes at `from` in `bytes` and at `at` in `data` are the same (both in range); short runs compared in place. */
function sameBytes(bytes: Buffer, from: number, data: Buffer, at: number, size: number): boolean {
  if (size > 64) return data.compare(bytes, from, from + size, at, at + size) === 0;
  for (let i = 0; i < size; i++) if (bytes[from + i] !== data[at + i]) return false;
  return true;
}

/**
 * The LF that ends the line at `pos`, or -1 when it has not arrived. One further than
 * MAX_HEADER_BYTES counts as not arrived, so that waitForLine drops the line as it would have if
 * the chunk had ended earlier.
 */
function lineEnd(data: Buffer, pos: number): number {
  const lf = data.indexOf(LF, pos);
  return lf - pos > MAX_HEADER_BYTES ? -1 : lf;
}

/**
 * Part headers are Content-* (and X-*): a line like `IO1:H` is a body without headers. The colon
 * that ends the header name of the line from `pos` to `end`, or -1 when the line is no header
 * (its text before the first colon is not /^(content|x)-[token characters]+$/i).
 */
function headerNameEnd(data: Buffer, pos: number, end: number): number {
  const prefix = ((data[pos] as number) | 0x20) === 0x78 ? X_PREFIX : CONTENT_PREFIX;
  if (end - pos <= prefix.length) return -1;
  for (let i = 0; i < prefix.length; i++) {
    const byte = data[pos + i] as number;
    const want = prefix[i] as number;
    // Letters in either case; the dash itself (CR | 0x20 would be a dash too).
    if (want === DASH ? byte !== DASH : (byte | 0x20) !== want) return -1;
  }
  for (let at = pos + prefix.length; at < end; at++) {
    const byte = data[at] as number;
    if (byte === COLON) return at > pos + prefix.length ? at : -1;
    if (TOKEN[byte] !== 1) return -1;
  }
  return -1;
}

const COLON = 0x3a;
const CONTENT_PREFIX = Buffer.from('content-', 'latin1');
const X_PREFIX = Buffer.from('x-', 'latin1');
/** 1 for the bytes of an HTTP token (RFC 9110): ! # $ % & ' * + - . ^ _ ` | ~ digits letters. */
const TOKEN = new Uint8Array(256);
for (const byte of Buffer.from("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 'latin1')) TOKEN[byte] = 1;
