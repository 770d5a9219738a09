/**
 * The one answer path: every device request, whichever node sends it, is sent and read here, so
 * that a device's error forms are read in one place (undici's response-error interceptor is the
 * model: composed once, for every request). HTTP status (the client), a CGI `# Error:` / `Error`
 * line in a 200 answer, an XML failure document (with any HTTP status) and a stream whose opening answer
 * is such a line all become `EDEVICE` with the device's words: a refused command is never a
 * success. Text answers are decoded here, by their declared charset.
 */
import { cgiFailure, withoutMissingGroups } from './cgi/codec';
import { withSecrets } from './errors/echo';
import { IpcamError } from './errors/errors';
import type { DeviceClient, DeviceStream, RequestOptions, StreamOptions } from './transport/client';
import { parseXml, type XmlElement } from './xml/codec';
import { failureOf } from './xml/device-errors';
import { ElementBudget } from './xml/well-formed';

/** A CGI answer (error lines in a 200 answer are already EDEVICE). */
export interface CgiAnswer {
  status: number;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The body as text by its declared charset (UTF-8 default), decoded when first read: binary answers are never read so. */
  readonly text: string;
  /**
   * What the device's words in this answer must not hold to be shown (`holdsSecret`): the
   * device's credentials, the call's secret parameters and the request's own.
   */
  secrets: readonly string[];
}

/** How an error line in an answer is told: what was asked and the names it carried. */
export interface AnswerContext {
  /** What was asked, in our words, e.g. `relay command`. */
  what: string;
  /** Names the request carried (checked): a known error line about one is told in our words. */
  names?: readonly string[];
  /** Secrets besides the device's credentials that the device's words must not hold to be shown. */
  secrets?: readonly string[];
  /** The answer is content (a file's text): a first line starting with `Error` is data there. */
  content?: boolean;
  /**
   * A parameter list: leading `Error -1 getting param in group 'X'` lines are the device saying
   * it lacks a group (the groups it has follow), not a refusal; any other error line still is.
   */
  groups?: boolean;
}

/** Charsets whose text answers are decoded by their own table; any other label is UTF-8. */
const SINGLE_BYTE = /^(iso-?8859-?1|latin-?1|l1|iso_8859-1|cp1252|windows-1252|us-ascii|ascii|cp819|ibm819)$/i;

/**
 * The charset a Content-Type declares, as a decoder label: `utf-8` unless it names ISO-8859-1
 * (or an alias), windows-1252 or ASCII, which are all read with the windows-1252 table (the
 * WHATWG rule for `latin1`: a superset that gives each ISO-8859-1 byte its character).
 */
export function charsetOf(contentType: string): 'utf-8' | 'windows-1252' {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match && SINGLE_BYTE.test(match[1] as string) ? 'windows-1252' : 'utf-8';
}

const UTF8 = new TextDecoder('utf-8');
/**
 * windows-1252 where it differs from ISO-8859-1 (0x80-0x9F), as WHATWG decodes both labels. Node's
 * own `windows-1252` decoder gives these bytes as C1 controls, so the table is ours.
 */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
].map((code) => String.fromCharCode(code));

/** A text answer decoded by its declared charset (field notes: some answers are ISO-8859-1). */
export function decodeText(body: Buffer, contentType: string): string {
  if (charsetOf(contentType) === 'utf-8') return UTF8.decode(body);
  return body.toString('latin1').replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] as string);
}

/** The media type (before any `;`) is blank or `text/...`, in any case: read without splitting or copying the header. */
const TEXT_OR_NONE = /^\s*(?:;|$|text\/)/i;

/** Text answers are read for error lines; pictures, archives, firmware and multipart streams are not. */
export function isText(contentType: string): boolean {
  return TEXT_OR_NONE.test(contentType);
}

/**
 * A CGI answer whose text is decoded when first read, and only then: a download, a backup or a
 * picture is handed on as its bytes and never becomes a string too (a 31 MiB file would be a
 * 62 MB string beside its Buffer).
 */
export function cgiAnswer(status: number, contentType: string, headers: CgiAnswer['headers'], body: Buffer, secrets: readonly string[]): CgiAnswer {
  return new LazyTextAnswer(status, contentType, headers, body, secrets);
}

/** A class, not an object literal with a getter: V8 builds such a literal the slow way on every answer. */
class LazyTextAnswer implements CgiAnswer {
  private decoded: string | undefined;

  constructor(
    readonly status: number,
    readonly contentType: string,
    readonly headers: CgiAnswer['headers'],
    readonly body: Buffer,
    readonly secrets: readonly string[],
  ) {}

  get text(): string {
    this.decoded ??= decodeText(this.body, this.contentType);
    return this.decoded;
  }
}

/** Most of a parameter list read for its leading missing-group lines: one a group asked (64), each under 200 bytes. */
const GROUP_ERRORS_MAX = 16 * 1024;

/** The `EDEVICE` a 200 text answer's error line stands for, or undefined. */
function refusalOf(status: number, contentType: string, head: Buffer, ctx: AnswerContext, secrets: readonly string[]): IpcamError | undefined {
  if (status !== 200 || ctx.content || !isText(contentType)) return undefined;
  const text = decodeText(head.subarray(0, ctx.groups ? GROUP_ERRORS_MAX : 1024), contentType);
  return cgiFailure(ctx.groups ? withoutMissingGroups(text).rest : text, { what: ctx.what, names: ctx.names ?? [], secrets });
}

/**
 * One CGI exchange: sends through the device's client (HTTP status errors are `EHTTP` there),
 * reads a 200 text answer's error line into `EDEVICE`, and gives the answer.
 */
export async function cgiExchange(client: DeviceClient, opts: RequestOptions, ctx: AnswerContext): Promise<CgiAnswer> {
  const res = await client.request(opts);
  const secrets = withSecrets(client.secrets, ctx.secrets);
  const refusal = refusalOf(res.status, res.contentType, res.body, ctx, secrets);
  if (refusal) throw refusal;
  return cgiAnswer(res.status, res.contentType, res.headers, res.body, secrets);
}

/** One XML-interface request as the answer path sends it. */
export interface XmlCall {
  /** Operation path, e.g. `/GetDeviceInfo` or `/PtzControl/2/Left`. */
  path: string;
  method?: 'GET' | 'POST';
  /** Request document (see `buildDocument`). */
  body?: string;
  signal?: AbortSignal;
  /** Secrets the call carries besides the device's credentials (a new password): device words holding any part of one are withheld. */
  secrets?: readonly string[];
  /** Largest answer read (bytes; default the client's). */
  maxBytes?: number;
  /** Most elements the answer may hold (default `MAX_XML_ELEMENTS`). */
  maxElements?: number;
  /** A command sent on the device's control lane (PTZ), never behind slow answers. */
  control?: boolean;
  /** Safe to send twice (see `RequestOptions.repeatable`). */
  repeatable?: boolean;
  /** false: not told to the client's `onOutcome` (see `RequestOptions.report`). */
  report?: boolean;
}

/**
 * One XML-interface exchange: sends the document, reads the answer whatever the HTTP status,
 * and turns a failure document into `EDEVICE` (or `EAUTH`).
 */
export async function xmlExchange(client: DeviceClient, call: XmlCall): Promise<XmlElement> {
  const res = await client.request({
    method: call.method ?? 'POST',
    path: call.path,
    ...(call.body !== undefined && { body: call.body, contentType: 'application/xml; charset=utf-8' }),
    signal: call.signal,
    ...(call.maxBytes !== undefined && { maxBytes: call.maxBytes }),
    // The element budget is held as the answer arrives: millions of elements are never read whole.
    onChunk: new ElementBudget(call.maxElements).push,
    ...(call.control && { control: true }),
    ...(call.repeatable && { repeatable: true }),
    report: call.report,
    allowHttpError: true,
  });
  const ok = res.status >= 200 && res.status < 300;
  const looksXml = /^\s*(\uFEFF)?</.test(res.body.subarray(0, 64).toString('utf8'));
  if (!looksXml) {
    if (!ok) throw new IpcamError('EHTTP', `The device answered HTTP ${res.status} to ${call.path}`, { status: res.status });
    throw new IpcamError('EPARSE', `The answer to ${call.path} is not XML`);
  }
  let root: XmlElement;
  try {
    root = parseXml(res.body, call.maxElements === undefined ? {} : { maxElements: call.maxElements });
  } catch (err) {
    if (!ok) throw new IpcamError('EHTTP', `The device answered HTTP ${res.status} to ${call.path}`, { status: res.status });
    throw err;
  }
  const failure = failureOf(root, { status: res.status, secrets: withSecrets(client.secrets, call.secrets) });
  if (failure) throw failure;
  if (!ok) throw new IpcamError('EHTTP', `The device answered HTTP ${res.status} to ${call.path}`, { status: res.status });
  return root;
}

/** Most of a refusing stream's answer read: an error line is short; a stream never ends. */
const REFUSAL_MAX = 4096;

/**
 * Opens a multipart stream. A 200 whose answer is text, not a multipart stream, is the device
 * refusing it (`# Error: ...`): read (bounded, within the device timeout), closed, and `EDEVICE`
 * with the device's words. A multipart answer is never read here (a quiet stream may send no
 * byte for minutes).
 */
export async function openStreamChecked(client: DeviceClient, opts: StreamOptions, ctx: AnswerContext): Promise<DeviceStream> {
  const stream = await client.openStream(opts);
  if (!isText(stream.contentType)) return stream;
  let head: Buffer;
  try {
    head = await readHead(stream, client.options.timeout, opts.signal);
  } finally {
    await stream.close();
  }
  const refusal = refusalOf(stream.status, stream.contentType, head, ctx, client.secrets);
  if (refusal) throw refusal;
  throw new IpcamError('EPARSE', `Expected a multipart stream, got "${stream.contentType || 'no content type'}"`);
}

/** The first bytes of a text answer: up to `REFUSAL_MAX`, its first line, its end, or what came within `timeout` (or before `signal`). */
function readHead(stream: DeviceStream, timeout: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let read = false;
    // Chunks that come after it until the stream is closed are not read.
    const done = (): void => {
      if (read) return;
      read = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve(Buffer.concat(chunks, Math.min(size, REFUSAL_MAX)));
    };
    const timer = setTimeout(done, timeout);
    signal?.addEventListener('abort', done, { once: true });
    if (signal?.aborted) return done();
    stream.body.listen({
      onData: (chunk) => {
        if (read) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= REFUSAL_MAX || chunk.includes(0x0a)) done();
      },
      onEnd: done,
      onError: done,
    });
  });
}
