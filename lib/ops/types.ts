/**
 * An operation of the table: what a flow names (`operation`), the interface and access level it
 * needs, its parameters (lib/input/params, limits as data), how its request is built (through the CGI or
 * XML codec only), how its answer is read, and its class: who may choose it.
 */
import type { CgiAnswer } from '../answer';
import type { CgiParams } from '../cgi/codec';
import type { Param, ShapeValue } from '../input/params';
import type { DeviceClient } from '../transport/client';
import type { UploadFile } from '../transport/upload';
import type { XmlElement } from '../xml/codec';

export type OpInterface = 'xml' | 'cgi' | 'rtsp';
export type AccessLevel = 'view' | 'operator' | 'admin';

/**
 * Who may choose an operation. `read`: changes nothing, reveals no secret, makes the device
 * connect nowhere; the only class a message may choose (`msg.payload.operation`). Every other
 * class runs only from a node whose own `operation` setting names it: `change` (settings,
 * parameters, uploads that destroy nothing), `outbound` (the device connects to a server the
 * parameters name), `files` (reads the device's files), `destructive` (destroys or replaces).
 */
export const OP_CLASSES = ['read', 'change', 'outbound', 'files', 'destructive'] as const;
export type OpClass = (typeof OP_CLASSES)[number];

/**
 * The classes whose every request may be sent twice: they change nothing (`read`, and `files`,
 * which reads). When a device closes a kept-alive connection before answering, their requests
 * are sent again once on a new connection (`RequestOptions.repeatable`); a request of another
 * class is only when it says so itself (`OpRequest.repeatable`).
 */
export function repeatableClass(opClass: OpClass): boolean {
  return opClass === 'read' || opClass === 'files';
}

/** One HTTP request of an operation. CGI: `path` + `query` (encoded by the CGI codec); XML: `path` + `xml` document. */
export interface OpRequest {
  method?: 'GET' | 'POST';
  /** Path without a query, e.g. `/cgi-bin/admin/equip` or `/GetAlarmStatus`. */
  path: string;
  query?: CgiParams;
  /** XML request document (built with lib/xml/codec). */
  xml?: string;
  /** A body of another kind: bytes with their content type, or a file sent as multipart/form-data. */
  body?: { data: Buffer; contentType: string } | { file: UploadFile };
  /** Overrides the device timeout (ms), e.g. for an upload. */
  timeout?: number;
  /** A time (ms since epoch) the request ends by in any case: the end of a polling loop. */
  deadline?: number;
  /** A cheap read sent first while the device's authentication is unknown, so that the body goes once (see `RequestOptions.probe`). */
  probe?: OpRequest;
  /** Largest answer accepted (bytes). */
  maxBytes?: number;
  /** Upload progress of `body` (bytes sent of the total). */
  onUpload?: (sent: number, total: number) => void;
  /** What the request is, in our words, for an error line the device answers (e.g. `file write`). */
  what?: string;
  /** Names the request carried (checked), so that a known error line about one is told in our words. */
  names?: readonly string[];
  /** Secrets the request carries (a password parameter): device words holding one are never shown. */
  secrets?: readonly string[];
  /**
   * The answer is content, not a status (a file's text, a download): a first line starting with
   * `Error` is data there, not an error line.
   */
  content?: boolean;
  /** A short command (relay, PTZ, I/O check): sent on the device's control lane, never behind slow answers. */
  control?: boolean;
  /** Most elements an XML answer may hold (default `MAX_XML_ELEMENTS`). */
  maxElements?: number;
  /** A parameter list: leading missing-group error lines are no refusal (see `AnswerContext.groups`). */
  groups?: boolean;
  /** Non-2xx answers are handed to the parser (GetSnapshot's failure documents come with 400), not `EHTTP`. */
  allowHttpError?: boolean;
  /**
   * Sending it twice does what sending it once does: a relay switched on or off, a PTZ stop, a
   * preset gone to, a move that lasts until Stop. Sent again once on a new connection when the
   * device closed a kept-alive one before answering (`RequestOptions.repeatable`); default false,
   * and never for a pulse, a sequence, an upload or a destructive operation. Every request of a
   * `repeatableClass` operation is, without saying so.
   */
  repeatable?: boolean;
}

/** What an operation gives: `payload`, and message fields beside it. */
export interface OpResult<R = unknown> {
  payload: R;
  filename?: string;
  contentType?: string;
  total?: number;
  /** Parameter groups asked that the device lacks (`msg.missing`). */
  missing?: string[];
}

/** What an operation's procedure may do: send requests through the runner, report progress. */
export interface OpContext {
  readonly client: DeviceClient;
  readonly signal?: AbortSignal;
  /** A CGI request; a 200 answer holding an error line is EDEVICE. */
  cgi(request: OpRequest): Promise<CgiAnswer>;
  /** An XML request; a failure document is EDEVICE (or EAUTH). */
  xml(request: OpRequest): Promise<XmlElement>;
  /** Progress for the node status, 0-100, with a short text (`upload`, `device`). */
  progress(percent: number, stage: string): void;
  /** Waits `ms` (ends early with the signal). */
  sleep(ms: number): Promise<void>;
}

interface OpBase<P> {
  name: string;
  api: OpInterface;
  access: AccessLevel;
  /** Who may choose it (OP_CLASSES): only `read` from a message. */
  class: OpClass;
  /**
   * What the editor lists it as, in plain words (`Device information`); the name stays the key a
   * flow and the help use. The request and edgerecord tables give every entry one.
   */
  label?: string;
  /** One line for the editor and README. */
  summary: string;
  params: Param<P>;
}

/** One request, one answer. */
export interface CgiOperation<P, R> extends OpBase<P> {
  api: 'cgi';
  request(params: P): OpRequest;
  parse(answer: CgiAnswer, params: P): OpResult<R>;
}

export interface XmlOperation<P, R> extends OpBase<P> {
  api: 'xml';
  request(params: P): OpRequest;
  parse(root: XmlElement, params: P): OpResult<R>;
}

/** Several requests (a procedure such as the SMTP test or a firmware upgrade), or another protocol. */
export interface ProcedureOperation<P, R> extends OpBase<P> {
  run(ctx: OpContext, params: P): Promise<OpResult<R>>;
}

export type OperationOf<P, R> = CgiOperation<P, R> | XmlOperation<P, R> | ProcedureOperation<P, R>;

/**
 * An entry of the table: what the runner, the nodes and the editor rules see. `P` is what its
 * parameters parse a message's input into, `R` its payload: a table of entries of several kinds
 * holds them as `Operation` (both `unknown`), and a caller holding the entry itself keeps both
 * (`runOp` gives an `R`).
 */
export interface Operation<P = unknown, R = unknown> {
  readonly name: string;
  readonly api: OpInterface;
  readonly access: AccessLevel;
  readonly class: OpClass;
  /** `class` is `destructive` (the (D) of the tables): kept beside the class for the tables and the editor. */
  readonly destructive: boolean;
  /** The plain words the editor lists it by (the name when the entry gives none). */
  readonly label: string;
  readonly summary: string;
  readonly params: Param<P>;
  /** Validates `input` (EINPUT, nothing sent) and runs. */
  invoke(ctx: OpContext, input: unknown): Promise<OpResult<R>>;
  /** Validates `input` and builds the request without sending it (single-request operations). */
  build?(input: unknown): OpRequest;
}

/**
 * An entry of the table, its request and parser checked against each other by the compiler; the
 * parameter and payload types stay with it. `input` is validated once, by `params`, per call.
 */
export function defineOp<P, R>(op: OperationOf<P, R>): Operation<P, R> {
  const validate = (input: unknown): P => op.params.parse(input, 'payload');
  const base = { name: op.name, api: op.api, access: op.access, class: op.class, destructive: op.class === 'destructive', label: op.label ?? op.name, summary: op.summary, params: op.params };
  if ('run' in op) return { ...base, invoke: async (ctx, input) => op.run(ctx, validate(input)) };
  if (op.api === 'xml') {
    const xmlOp = op as XmlOperation<P, R>;
    return {
      ...base,
      build: (input) => xmlOp.request(validate(input)),
      invoke: async (ctx, input) => {
        const params = validate(input);
        return xmlOp.parse(await ctx.xml(xmlOp.request(params)), params);
      },
    };
  }
  const cgiOp = op as CgiOperation<P, R>;
  return {
    ...base,
    build: (input) => cgiOp.request(validate(input)),
    invoke: async (ctx, input) => {
      const params = validate(input);
      return cgiOp.parse(await ctx.cgi(cgiOp.request(params)), params);
    },
  };
}

export type { CgiAnswer, ShapeValue };
