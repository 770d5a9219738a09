import type { ServerResponse } from 'node:http';
import type { Route, SimContext } from './context';
import { queryValue } from './context';
import { sendRefusal, sendText } from './respond';

/** How the simulated device frames its multipart streams (the quirks of the field notes). */
export interface StreamStyle {
  /** `lf` sends LF-only line endings. */
  lineEnding: 'crlf' | 'lf';
  /** Declare `boundary=--ioboundary` (the delimiter on the wire stays `--ioboundary`). */
  boundaryWithDashes: boolean;
  /** Blank lines between parts. */
  extraBlankLines: boolean;
  /** A Content-Length header in each part. */
  contentLength: boolean;
  /** Each part goes out in writes of this many bytes, `pieceDelay` apart (0: one write per part). */
  pieceSize: number;
  /** Pause between the pieces of a part (ms; 0: the next turn of the event loop). */
  pieceDelay: number;
  /** I/O streams open without the state parts (`H`/`L`): nothing comes until an input changes. */
  quiet: boolean;
  /** The answer's headers go out at once, its first body byte only this long after (ms; 0: no delay). */
  firstByteDelay: number;
  /** Half-open: after its first part (I/O: the state parts) a stream writes nothing more and never closes. */
  halfOpen: boolean;
}

const DEFAULT_STYLE: StreamStyle = {
  lineEnding: 'crlf',
  boundaryWithDashes: false,
  extraBlankLines: false,
  contentLength: false,
  pieceSize: 0,
  pieceDelay: 0,
  quiet: false,
  firstByteDelay: 0,
  halfOpen: false,
};
const STYLE_FLAGS = ['boundaryWithDashes', 'extraBlankLines', 'contentLength', 'quiet', 'halfOpen'] as const;
const STYLE_NUMBERS = ['pieceSize', 'pieceDelay', 'firstByteDelay'] as const;
/** Longest delay a style may ask for (ms): a day. */
const MAX_STYLE_DELAY = 24 * 3600_000;

/** Checks a whole style (the control API merges what it gets into the current one). */
function checkStyle(style: StreamStyle): StreamStyle {
  const value = style as unknown as Record<string, unknown>;
  if (value['lineEnding'] !== 'crlf' && value['lineEnding'] !== 'lf') throw new Error('lineEnding must be crlf or lf');
  for (const key of STYLE_FLAGS) if (typeof value[key] !== 'boolean') throw new Error(`${key} must be true or false`);
  for (const key of STYLE_NUMBERS) {
    const n = value[key];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_STYLE_DELAY) throw new Error(`${key} must be a whole number from 0 to ${MAX_STYLE_DELAY}`);
  }
  const unknown = Object.keys(value).filter((k) => !(k in DEFAULT_STYLE));
  if (unknown.length > 0) throw new Error(`unknown stream style ${unknown.join(', ')}`);
  return { ...style };
}

/**
 * Faults played on streams already open. `stall` is the half-open connection: the stream stops
 * writing and never closes.
 */
export type StreamFault = 'drop' | 'stall' | 'garbage' | 'oversize';

export type DetectionKind = 'motion' | 'audio';

export interface RelayChange {
  port: number;
  active: boolean;
  time: number;
}

interface OpenStream {
  res: ServerResponse;
  kind: 'input' | 'output' | DetectionKind;
  /** Ports or groups asked for; empty = all. */
  filter: number[];
  timer?: NodeJS.Timeout;
  stalled: boolean;
  /** Half-open style: what it opened with goes out, nothing after. */
  frozen: boolean;
  /** Bytes waiting for the first-byte delay or for their turn as pieces, oldest first. */
  queue: Buffer[];
  queued: number;
  /** The first-byte delay or the pause before the next piece. */
  writeTimer?: NodeJS.Timeout;
  /** One answer only (`mode=single`): ends once the queue is out. */
  ending: boolean;
}

const IO_BOUNDARY = 'ioboundary';
const OVERSIZE_BYTES = 2 * 1024 * 1024;
/** Bytes a stream may hold back (first-byte delay, slow pieces); beyond, parts are dropped. */
const MAX_QUEUED = 4 * 1024 * 1024;

/**
 * Digital inputs, output relays and detection levels of the simulated device, with the CGI
 * `input`, `output` and `detection` endpoints: check, multipart monitor streams, relay actions.
 */
export class SimulatedIo {
  readonly inputs = new Map<number, boolean>([
    [1, false],
    [2, false],
  ]);
  readonly outputs = new Map<number, boolean>([
    [1, false],
    [2, false],
  ]);
  readonly levels: Record<DetectionKind, Map<number, { level: number; threshold: number }>> = {
    motion: new Map([
      [1, { level: 0, threshold: 40 }],
      [2, { level: 0, threshold: 50 }],
    ]),
    audio: new Map([[1, { level: 0, threshold: 60 }]]),
  };
  private currentStyle: StreamStyle = { ...DEFAULT_STYLE };
  /** Detection streams repeat the levels this often (ms). */
  detectionInterval = 1000;
  /** Every relay change, oldest first (bounded). */
  readonly relayLog: RelayChange[] = [];
  private readonly streams = new Set<OpenStream>();
  private readonly sequenceTimers = new Set<NodeJS.Timeout>();

  get openStreams(): number {
    return this.streams.size;
  }

  /** How streams are framed and paced; a bad value throws and changes nothing. */
  get style(): StreamStyle {
    return this.currentStyle;
  }

  set style(style: StreamStyle) {
    this.currentStyle = checkStyle(style);
  }

  setInput(port: number, active: boolean): void {
    this.change(this.inputs, 'input', port, active);
  }

  setOutput(port: number, active: boolean): void {
    this.change(this.outputs, 'output', port, active);
    this.relayLog.push({ port, active, time: Date.now() });
    if (this.relayLog.length > 1000) this.relayLog.splice(0, this.relayLog.length - 1000);
  }

  setLevel(kind: DetectionKind, group: number, level: number, threshold?: number): void {
    const current = this.levels[kind].get(group) ?? { level: 0, threshold: 50 };
    this.levels[kind].set(group, { level, threshold: threshold ?? current.threshold });
    for (const s of this.streams) if (s.kind === kind && wants(s, group)) this.writeLevels(s);
  }

  /** Writes the current states (`H`/`L`) on every open I/O stream, as devices that repeat them do. */
  sendStates(): void {
    for (const s of this.streams) {
      if (s.kind !== 'input' && s.kind !== 'output') continue;
      const ports = s.kind === 'input' ? this.inputs : this.outputs;
      for (const [port, active] of ports) if (wants(s, port)) this.writePart(s, `IO${port}:${active ? 'H' : 'L'}`);
    }
  }

  /** Plays a fault on every open stream. */
  streamFault(fault: StreamFault): void {
    for (const s of this.streams) {
      if (fault === 'drop') s.res.socket?.destroy();
      else if (fault === 'stall') s.stalled = true;
      else if (fault === 'garbage') s.res.write(Buffer.from('\x00\xff garbage \r\n\x7f\x01 no boundary here \n'));
      else this.writePart(s, 'X'.repeat(OVERSIZE_BYTES));
    }
  }

  closeAll(): void {
    for (const timer of this.sequenceTimers) clearTimeout(timer);
    this.sequenceTimers.clear();
    for (const s of this.streams) this.forget(s);
  }

  readonly route: Route = (ctx) => {
    const match = /^\/cgi-bin\/admin\/(input|output|detection)(\.cgi)?$/.exec(ctx.path);
    if (!match) return false;
    if (match[1] === 'detection') return this.detection(ctx);
    const kind = match[1] as 'input' | 'output';
    const ports = kind === 'input' ? this.inputs : this.outputs;
    const action = queryValue(ctx, 'action');
    if (kind === 'output' && action !== undefined) return this.relayAction(ctx, action);
    const check = queryValue(ctx, 'check');
    if (check !== undefined) {
      if (ctx.state.answer.refuseCheck) return sendRefusal(ctx.res, `Error getting ${kind} status`);
      const ids = parseIds(check);
      if (!ids || ids.some((id) => !ports.has(id))) return badRequest(ctx, `unknown ${kind} in "${check}"`);
      sendText(ctx.res, 200, ids.map((id) => `${kind}${id}=${ports.get(id) ? 1 : 0}\r\n`).join(''));
      return true;
    }
    const monitor = queryValue(ctx, 'monitor');
    if (monitor !== undefined) {
      if (ctx.state.answer.refuseStream) return sendRefusal(ctx.res, `Error starting ${kind} monitor`);
      const ids = monitor === '' ? [] : parseIds(monitor);
      if (!ids || ids.some((id) => !ports.has(id))) return badRequest(ctx, `unknown ${kind} in "${monitor}"`);
      const stream = this.open(ctx.res, kind, ids);
      // The current state first (H/L), changes after (/ and \); a quiet device sends no states.
      if (!this.style.quiet) for (const [port, active] of ports) if (wants(stream, port)) this.writePart(stream, `IO${port}:${active ? 'H' : 'L'}`);
      if (this.style.halfOpen) stream.frozen = true;
      return true;
    }
    return badRequest(ctx, `${kind} needs check, monitor${kind === 'output' ? ' or action' : ''}`);
  };

  private detection(ctx: SimContext): true {
    const kind = (queryValue(ctx, 'type') ?? 'motion') as DetectionKind;
    if (kind !== 'motion' && kind !== 'audio') return badRequest(ctx, `unknown detection type ${kind}`);
    if (ctx.state.answer.refuseStream) return sendRefusal(ctx.res, `Error starting ${kind} detection`);
    const groupText = queryValue(ctx, 'group');
    const groups = groupText === undefined || groupText === '' ? [] : parseIds(groupText);
    if (!groups || groups.some((g) => !this.levels[kind].has(g))) return badRequest(ctx, `unknown group in "${groupText ?? ''}"`);
    const stream = this.open(ctx.res, kind, groups);
    this.writeLevels(stream);
    if (queryValue(ctx, 'mode') === 'single') {
      stream.ending = true;
      this.pump(stream);
      return true;
    }
    if (this.style.halfOpen) stream.frozen = true;
    if (this.streams.has(stream) && !stream.frozen) stream.timer = setInterval(() => this.writeLevels(stream), this.detectionInterval);
    return true;
  }

  /** `output?action=[<id>]:<a>[<wait><a>...]`: `/` active, `\` inactive, waits in ms. */
  private relayAction(ctx: SimContext, action: string): true {
    const match = /^(\d*):([/\\](\d+[/\\])*)(\d+)?$/.exec(action);
    const port = match ? Number(match[1] === '' ? 1 : match[1]) : NaN;
    if (!match) return badRequest(ctx, `bad action "${action}"`);
    // Real firmware: an output it lacks, or a relay it cannot drive, is a 200 with an error line.
    if (!this.outputs.has(port) || ctx.state.answer.refuseRelay) return sendRefusal(ctx.res, 'Error setting output');
    const steps = (match[2] as string).match(/[/\\]|\d+/g) as string[];
    let at = 0;
    for (const step of steps) {
      if (/^\d+$/.test(step)) {
        at += Number(step);
        continue;
      }
      const active = step === '/';
      if (at === 0) this.setOutput(port, active);
      else {
        const timer = setTimeout(() => {
          this.sequenceTimers.delete(timer);
          this.setOutput(port, active);
        }, at);
        this.sequenceTimers.add(timer);
      }
    }
    sendText(ctx.res, 200, 'OK');
    return true;
  }

  private change(ports: Map<number, boolean>, kind: 'input' | 'output', port: number, active: boolean): void {
    if (!ports.has(port)) throw new Error(`no ${kind} ${port}`);
    const before = ports.get(port);
    ports.set(port, active);
    if (before === active) return;
    for (const s of this.streams) if (s.kind === kind && wants(s, port)) this.writePart(s, `IO${port}:${active ? '/' : '\\'}`);
  }

  private open(res: ServerResponse, kind: OpenStream['kind'], filter: number[]): OpenStream {
    const declared = this.style.boundaryWithDashes ? `--${IO_BOUNDARY}` : IO_BOUNDARY;
    res.writeHead(200, { 'content-type': `multipart/x-mixed-replace; boundary=${declared}`, 'cache-control': 'no-cache', connection: 'close' });
    const stream: OpenStream = { res, kind, filter, stalled: false, frozen: false, queue: [], queued: 0, ending: false };
    // A client that gave up while the answer was held back (slow fault) is gone: no 'close' will come.
    if (res.destroyed) return stream;
    // The 200 goes out now, whether or not a byte of the body follows soon (quiet, first-byte delay).
    res.flushHeaders();
    this.streams.add(stream);
    res.on('close', () => this.forget(stream));
    const delay = this.style.firstByteDelay;
    if (delay > 0) {
      stream.writeTimer = setTimeout(() => {
        stream.writeTimer = undefined;
        this.pump(stream);
      }, delay);
    }
    return stream;
  }

  private forget(stream: OpenStream): void {
    if (stream.timer) clearInterval(stream.timer);
    if (stream.writeTimer) clearTimeout(stream.writeTimer);
    stream.queue = [];
    stream.queued = 0;
    if (this.streams.delete(stream)) stream.res.end();
  }

  private writeLevels(stream: OpenStream): void {
    const levels = [...this.levels[stream.kind as DetectionKind]].filter(([group]) => wants(stream, group)).sort(([a], [b]) => a - b);
    const eol = this.style.lineEnding === 'lf' ? '\n' : '\r\n';
    this.writePart(stream, levels.map(([group, l]) => `group=${group};level=${l.level};threshold=${l.threshold};`).join(eol));
  }

  /** Boundary first, as the devices send it: a part is complete when the next one begins. */
  private writePart(stream: OpenStream, body: string): void {
    if (stream.stalled || stream.frozen) return;
    const eol = this.style.lineEnding === 'lf' ? '\n' : '\r\n';
    const bytes = Buffer.from(body, 'latin1');
    const headers = [`--${IO_BOUNDARY}`, 'Content-Type: text/plain', ...(this.style.contentLength ? [`Content-Length: ${bytes.length}`] : []), '', ''].join(eol);
    const trailer = this.style.extraBlankLines ? eol + eol + eol : eol;
    const part = Buffer.concat([Buffer.from(headers, 'latin1'), bytes, Buffer.from(trailer, 'latin1')]);
    if (stream.queued + part.length > MAX_QUEUED) return;
    const size = this.style.pieceSize;
    if (size > 0) for (let at = 0; at < part.length; at += size) stream.queue.push(part.subarray(at, at + size));
    else stream.queue.push(part);
    stream.queued += part.length;
    this.pump(stream);
  }

  /** Writes what the first-byte delay and the piece pacing allow now. */
  private pump(stream: OpenStream): void {
    if (stream.writeTimer || !this.streams.has(stream)) return;
    for (let piece = stream.queue.shift(); piece; piece = stream.queue.shift()) {
      // A stalled stream keeps what it had not sent: half-open, mid-part if so.
      if (stream.stalled) return void stream.queue.unshift(piece);
      stream.queued -= piece.length;
      stream.res.write(piece);
      if (this.style.pieceSize > 0 && stream.queue.length > 0) {
        stream.writeTimer = setTimeout(() => {
          stream.writeTimer = undefined;
          this.pump(stream);
        }, this.style.pieceDelay);
        return;
      }
    }
    if (stream.ending) this.forget(stream);
  }
}

function wants(stream: OpenStream, id: number): boolean {
  return stream.filter.length === 0 || stream.filter.includes(id);
}

function parseIds(text: string): number[] | undefined {
  const ids = text.split(',').map((t) => t.trim());
  return ids.every((t) => /^\d+$/.test(t)) ? ids.map(Number) : undefined;
}

function badRequest(ctx: SimContext, why: string): true {
  sendText(ctx.res, 400, `Bad Request: ${why}`);
  return true;
}
