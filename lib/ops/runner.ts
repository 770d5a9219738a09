/**
 * The one runner of the operation table: validate (EINPUT, nothing sent) -> send through the one
 * answer path (lib/answer.ts) -> map errors (a CGI error line in a 200 answer and an XML failure
 * document are EDEVICE) -> parse.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cgiExchange, xmlExchange, type AnswerContext, type CgiAnswer } from '../answer';
import { buildCgiPath } from '../cgi/codec';
import { IpcamError, inputError } from '../errors/errors';
import { echo, withSecrets } from '../errors/echo';
import { didYouMean } from '../input/suggest';
import { secretValues } from '../input/params';
import type { DeviceClient, RequestOptions } from '../transport/client';
import type { XmlElement } from '../xml/codec';
import { repeatableClass, type OpClass, type OpContext, type OpRequest, type OpResult, type Operation } from './types';

export interface RunOptions extends Reporting {
  signal?: AbortSignal | undefined;
  /** Progress of long operations (upload, firmware), 0-100. */
  onProgress?: (percent: number, stage: string) => void;
  /**
   * Secrets this call carries (its password parameters): a device's words holding any part of
   * one are withheld, like those holding the device's own credentials. `runOperation` fills it.
   */
  secrets?: readonly string[];
}

/** Whether the client tells its `onOutcome` how the call's requests ended (see `RequestOptions.report`; default true). */
export interface Reporting {
  report?: boolean;
}

/** The request target of a CGI or XML request: path and encoded query. */
export function targetOf(request: OpRequest): string {
  return buildCgiPath(request.path, request.query);
}

export { cgiAnswer } from '../answer';

/**
 * @param repeatable every request of the call may be sent twice (its operation changes nothing,
 *   `repeatableClass`); otherwise only those that say so (`OpRequest.repeatable`).
 */
export function contextFor(client: DeviceClient, options: RunOptions = {}, repeatable = false): OpContext {
  return new RunContext(client, options.signal, options.secrets ?? [], options.onProgress, repeatable, options.report);
}

/**
 * What an operation's procedure is handed. A class, not an object of closures: a relay pulse
 * made this context for every command, and four closures per command were most of its cost.
 */
class RunContext implements OpContext {
  constructor(
    readonly client: DeviceClient,
    readonly signal: AbortSignal | undefined,
    /** The call's secrets (see `RunOptions.secrets`). */
    private readonly carried: readonly string[],
    private readonly onProgress: RunOptions['onProgress'],
    /** See `contextFor`. */
    private readonly repeatable: boolean,
    /** See `RunOptions.report`. */
    private readonly report: boolean | undefined,
  ) {}

  cgi(request: OpRequest): Promise<CgiAnswer> {
    const opts: RequestOptions = { method: request.method ?? 'GET', path: targetOf(request) };
    if (this.signal) opts.signal = this.signal;
    if (request.timeout !== undefined) opts.timeout = request.timeout;
    if (request.deadline !== undefined) opts.deadline = request.deadline;
    if (request.probe !== undefined) opts.probe = targetOf(request.probe);
    if (request.maxBytes !== undefined) opts.maxBytes = request.maxBytes;
    if (request.body && 'data' in request.body) {
      opts.body = request.body.data;
      opts.contentType = request.body.contentType;
    } else if (request.body && 'file' in request.body) {
      opts.upload = request.body.file;
    }
    if (request.onUpload) opts.onUpload = request.onUpload;
    if (request.control) opts.control = true;
    if (request.allowHttpError) opts.allowHttpError = true;
    if (this.repeatable || request.repeatable) opts.repeatable = true;
    opts.report = this.report;
    const ctx: AnswerContext = { what: request.what ?? `request ${request.path}`, names: request.names ?? [], secrets: withSecrets(this.carried, request.secrets) };
    if (request.content) ctx.content = true;
    if (request.groups) ctx.groups = true;
    return cgiExchange(this.client, opts, ctx);
  }

  xml(request: OpRequest): Promise<XmlElement> {
    return xmlExchange(this.client, {
      path: targetOf(request),
      method: request.method ?? 'POST',
      ...(request.xml !== undefined && { body: request.xml }),
      signal: this.signal,
      ...(request.control && { control: true }),
      ...(request.maxBytes !== undefined && { maxBytes: request.maxBytes }),
      ...(request.maxElements !== undefined && { maxElements: request.maxElements }),
      ...((this.repeatable || request.repeatable) && { repeatable: true }),
      report: this.report,
      secrets: withSecrets(this.carried, request.secrets),
    });
  }

  progress(percent: number, stage: string): void {
    this.onProgress?.(Math.max(0, Math.min(100, Math.round(percent))), stage);
  }

  async sleep(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.signal }).catch(() => {
      throw new IpcamError('ECONN', 'The operation was stopped');
    });
  }
}

/**
 * Runs `operation` with `input` (its parameters) on `client`. The secret parameters of the call
 * (the vocabulary's `secret` fields) join the device's credentials as what no device words in an
 * error may hold.
 */
export function runOperation<R>(client: DeviceClient, operation: Operation<unknown, R>, input: unknown, options: RunOptions = {}): Promise<OpResult<R>> {
  const own = secretValues(operation.params, input);
  return operation.invoke(contextFor(client, own.length === 0 ? options : { ...options, secrets: withSecrets(options.secrets ?? [], own) }, repeatableClass(operation.class)), input);
}

/**
 * The one call of a library function: runs the entry `operation` with `input` (validated once,
 * by the entry's parameters) and gives its payload with the entry's own type.
 */
export async function runOp<R>(client: DeviceClient, operation: Operation<unknown, R>, input: unknown, options: RunOptions = {}): Promise<R> {
  return (await runOperation(client, operation, input, options)).payload;
}

/** What each class does, for the error that refuses it from a message. */
const CLASS_WORDS: Record<Exclude<OpClass, 'read'>, string> = {
  change: 'changes settings or state of the device',
  outbound: 'makes the device connect to a server the parameters name',
  files: 'reads files of the device',
  destructive: 'destroys or replaces something on the device',
};

/**
 * Which operation a node runs. The node's own setting names it, or is `msg` and the message
 * names it; a message chooses only a `read` operation: every other class runs only from a node
 * whose own setting names it.
 */
export function chooseOperation(table: ReadonlyMap<string, Operation>, setting: string, fromMsg: unknown): Operation {
  const fromSetting = setting !== 'msg';
  if (fromSetting && fromMsg !== undefined && fromMsg !== null && fromMsg !== '' && fromMsg !== setting) {
    throw inputError(`This node runs ${echo(setting)}: msg.payload.operation ${echo(fromMsg)} can only choose when its Operation setting is msg; nothing was sent`);
  }
  const name = fromSetting ? setting : fromMsg;
  if (!fromSetting && (name === undefined || name === null || name === '')) throw inputError('This node takes its operation from msg.payload.operation, and none was given');
  const op = typeof name === 'string' ? table.get(name.trim()) : undefined;
  if (!op) throw inputError(`Unknown operation ${echo(name)}${didYouMean(name, table.keys())}`, `operation ${echo(name, 16)}`);
  if (!fromSetting && op.class !== 'read') {
    throw inputError(
      `${op.name} ${CLASS_WORDS[op.class]} (class ${op.class}): a message chooses only read operations; it runs only from a node whose Operation setting names it, so set the operation in the node; nothing was sent`,
    );
  }
  return op;
}
