// Reference for test/multipart-equivalence.test.ts and bench/streams.ts: lib/stream/multipart.ts as of
// main 1556f4a, verbatim from the next line on (`git show 1556f4a:lib/stream/multipart.ts`). Do not edit.
/**
 * Streaming parser for `multipart/x-mixed-replace` as these devices send it (field notes):
 * boundary declared with or without leading `--`, CRLF or LF, a preamble, blank lines between
 * parts, parts with or without headers and `Content-Length`, no closing boundary ever.
 *
 * Bytes are searched with Buffer.indexOf (native). A part that lies inside one chunk is handed
 * out as a view of that chunk, with no copy; a part that spans chunks is copied once. Memory is
 * bounded by the part size cap whatever the input: an oversized part is skipped to the next
 * boundary.
 */
export interface MultipartPart {
  /** Header names in lower case. */
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
  private headers: Record<string, string> = {};
  private sawHeader = false;
  /** Content-Length of the current part, or -1 to scan for the boundary. */
  private length = -1;
  /** Body bytes of the current part from earlier chunks. */
  private pieces: Buffer[] = [];
  private piecesLength = 0;
  /** A sized part already handed out by `flush()`, its boundary not yet seen. */
  private flushed = false;

  constructor(
    boundary: string,
    private readonly opts: MultipartOptions,
  ) {
    this.needle = Buffer.from(`--${boundary.replace(/^-+/, '')}`, 'latin1');
    this.maxPart = opts.maxPartSize ?? DEFAULT_MAX_PART;
  }

  write(chunk: Buffer): void {
    let data = this.carry.length === 0 ? chunk : this.joinCarry(chunk);
    this.carry = EMPTY;
    let pos = 0;
    for (;;) {
      const next = this.step(data, pos);
      if (next === NEED_MORE) return;
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
   * Call it when the connection has gone quiet. A sized part must have all its bytes; a scanned
   * text part must end with a line break. Bytes that still follow before the boundary form a
   * part of their own, so nothing is lost.
   */
  flush(): void {
    if (this.state === 'verify' && !this.flushed) {
      this.flushed = true;
      this.emit(EMPTY, false);
      return;
    }
    if (this.state !== 'body' || this.length >= 0) return;
    const tail = this.carry;
    if (this.piecesLength + tail.length === 0 || (tail.length > 0 ? tail[tail.length - 1] : this.lastPieceByte()) !== LF) return;
    this.carry = EMPTY;
    this.emit(tail, true);
  }

  private lastPieceByte(): number | undefined {
    const last = this.pieces[this.pieces.length - 1];
    return last?.[last.length - 1];
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
    const at = data.indexOf(this.needle, pos);
    if (at < 0) return this.keepTail(data, Math.max(pos, data.length - this.needle.length + 1));
    this.state = 'delimiter';
    return at + this.needle.length;
  }

  /** The rest of the boundary line: `--` closes (devices may go on anyway), anything else is padding. */
  private delimiterLine(data: Buffer, pos: number): number {
    const lf = lineEnd(data, pos);
    if (lf < 0) return this.waitForLine(data, pos);
    this.headers = {};
    this.sawHeader = false;
    this.length = -1;
    this.state = 'headers';
    return lf + 1;
  }

  private headerLine(data: Buffer, pos: number): number {
    const lf = lineEnd(data, pos);
    if (lf < 0) return this.waitForLine(data, pos);
    const end = lf > pos && data[lf - 1] === CR ? lf - 1 : lf;
    if (end === pos) {
      // A blank line ends the headers; before any header it is one of the extra blank lines.
      if (this.sawHeader) this.startBody();
      return lf + 1;
    }
    const line = data.toString('latin1', pos, end);
    const colon = line.indexOf(':');
    if (colon > 0 && HEADER_NAME.test(line.slice(0, colon))) {
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      this.headers[name] = value;
      this.sawHeader = true;
      if (name === 'content-length' && /^\d+$/.test(value)) this.length = Number(value);
      return lf + 1;
    }
    // Not a header: a part without headers, its body starts on this line.
    this.startBody();
    return pos;
  }

  private startBody(): void {
    this.state = 'body';
    this.pieces = [];
    this.piecesLength = 0;
    if (this.length > this.maxPart) this.startSkip();
  }

  /** Fast path: Content-Length bytes, kept only if a boundary really follows them (see verify). */
  private sizedBody(data: Buffer, pos: number): number {
    const need = this.length - this.piecesLength;
    if (data.length - pos < need) {
      this.takeBody(data.subarray(pos));
      return NEED_MORE;
    }
    this.takeBody(data.subarray(pos, pos + need));
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
    if (start < at || data.indexOf(this.needle, start) !== start) return this.resync(data, pos);
    if (!this.flushed) this.emit(EMPTY, false);
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
    const again = Buffer.concat([...this.pieces, data.subarray(pos)]);
    this.pieces = [];
    this.piecesLength = 0;
    this.length = -1;
    this.state = 'body';
    return again;
  }

  private scannedBody(data: Buffer, pos: number): number {
    const at = data.indexOf(this.needle, pos);
    if (at < 0) {
      // Keep the tail that could be the start of a boundary; the rest is body for sure.
      const keepFrom = Math.max(pos, data.length - this.needle.length + 1);
      this.takeBody(data.subarray(pos, keepFrom));
      if (this.piecesLength > this.maxPart + FRAMING_SLACK) {
        this.startSkip();
        return keepFrom;
      }
      return this.keepTail(data, keepFrom);
    }
    this.emit(data.subarray(pos, at), true);
    this.state = 'delimiter';
    return at + this.needle.length;
  }

  private startSkip(): void {
    this.warn(`A part is larger than the ${this.maxPart} byte cap; skipped to the next boundary`);
    this.pieces = [];
    this.piecesLength = 0;
    this.state = 'skip';
  }

  private takeBody(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.pieces.push(bytes);
    this.piecesLength += bytes.length;
  }

  private emit(tail: Buffer, scanned: boolean): void {
    const raw = this.pieces.length === 0 ? tail : Buffer.concat(tail.length > 0 ? [...this.pieces, tail] : this.pieces, this.piecesLength + tail.length);
    this.pieces = [];
    this.piecesLength = 0;
    const body = scanned ? frameless(raw) : raw;
    // Blank lines between parts (or after a flushed part) carry nothing.
    if (scanned && body.length === 0) return;
    // The same rule as while scanning (scannedBody), so that a part is kept or not wherever the chunks were cut.
    if (body.length > this.maxPart || raw.length > this.maxPart + FRAMING_SLACK) return this.warn(`A part is larger than the ${this.maxPart} byte cap; skipped to the next boundary`);
    this.opts.onPart({ headers: this.headers, body });
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

/**
 * The LF that ends the line at `pos`, or -1 when it has not arrived. One further than
 * MAX_HEADER_BYTES counts as not arrived, so that waitForLine drops the line as it would have if
 * the chunk had ended earlier.
 */
function lineEnd(data: Buffer, pos: number): number {
  const lf = data.indexOf(LF, pos);
  return lf - pos > MAX_HEADER_BYTES ? -1 : lf;
}

/** Part headers are Content-* (and X-*): a line like `IO1:H` is a body without headers. */
const HEADER_NAME = /^(content|x)-[!#$%&'*+.^_`|~0-9A-Za-z-]+$/i;

/**
 * A scanned body without its framing: the line break before the boundary, dashes that belong to
 * the boundary line (`----token` when the declared boundary carried `--`), extra blank lines.
 */
function frameless(body: Buffer): Buffer {
  let end = body.length;
  let dashes = end;
  while (dashes > 0 && body[dashes - 1] === DASH) dashes--;
  if (dashes < end && (dashes === 0 || body[dashes - 1] === LF)) end = dashes;
  let start = 0;
  while (start < end && (body[start] === CR || body[start] === LF)) start++;
  while (end > start && (body[end - 1] === CR || body[end - 1] === LF)) end--;
  return start === 0 && end === body.length ? body : body.subarray(start, end);
}
