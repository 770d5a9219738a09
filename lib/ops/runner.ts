/**
 * The one runner of the operation table: validate (EINPUT, nothing sent) -> send through the
 * device client -> map errors (a CGI error line in a 200 answer and an XML failure document are
 * EDEVICE) -> parse.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { buildCgiPath, cgiFailure } from '../cgi/codec';
import { IpcamError, inputError } from '../errors';
import { echo } from '../echo';
import { didYouMean } from '../suggest';
import { secretValues } from '../params';
import type { DeviceClient, RequestOptions } from '../transport/client';
import { xmlCall } from '../xml/call';
import type { CgiAnswer, OpClass, OpContext, OpRequest, OpResult, Operation } from './types';

export interface RunOptions {
  signal?: AbortSignal;
  /** Progress of long operations (upload, firmware), 0-100. */
  onProgress?: (percent: number, stage: string) => void;
  /**
   * Secrets this call carries (its password parameters): a device's words holding any part of
   * one are withheld, like those holding the device's own credentials. `runOperation` fills it.
   */
  secrets?: readonly string[];
}

/** The request target of a CGI or XML request: path and encoded query. */
export function targetOf(request: OpRequest): string {
  return buildCgiPath(request.path, request.query);
}

/** Text answers are read for error lines; pictures, archives and firmware are not. */
function isText(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === '' || type.startsWith('text/');
}

/**
 * A CGI answer whose text is decoded when first read, and only then: a download, a backup or a
 * picture is handed on as its bytes and never becomes a string too (a 31 MiB file would be a
 * 62 MB string beside its Buffer).
 */
export function cgiAnswer(status: number, contentType: string, headers: CgiAnswer['headers'], body: Buffer, secrets: readonly string[]): CgiAnswer {
  let text: string | undefined;
  return {
    status,
    contentType,
    headers,
    body,
    secrets,
    get text(): string {
      text ??= body.toString('utf8');
      return text;
    },
  };
}

export function contextFor(client: DeviceClient, options: RunOptions = {}): OpContext {
  const signal = options.signal;
  const carried = options.secrets ?? [];
  return {
    client,
    ...(signal && { signal }),
    async cgi(request) {
      const target = targetOf(request);
      const opts: RequestOptions = { method: request.method ?? 'GET', path: target };
      if (signal) opts.signal = signal;
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
      const res = await client.request(opts);
      const secrets = [...client.secrets, ...carried, ...(request.secrets ?? [])];
      if (res.status === 200 && !request.content && isText(res.contentType)) {
        const failure = cgiFailure(res.body, { what: request.what ?? `request ${request.path}`, names: request.names ?? [], secrets });
        if (failure) throw failure;
      }
      return cgiAnswer(res.status, res.contentType, res.headers, res.body, secrets);
    },
    xml(request) {
      return xmlCall(client, {
        path: targetOf(request),
        method: request.method ?? 'POST',
        ...(request.xml !== undefined && { body: request.xml }),
        ...(signal && { signal }),
        secrets: [...carried, ...(request.secrets ?? [])],
      });
    },
    progress(percent, stage) {
      options.onProgress?.(Math.max(0, Math.min(100, Math.round(percent))), stage);
    },
    async sleep(ms) {
      await sleep(ms, undefined, signal ? { signal } : undefined).catch(() => {
        throw new IpcamError('ECONN', 'The operation was stopped');
      });
    },
  };
}

/**
 * Runs `operation` with `input` (its parameters) on `client`. The secret parameters of the call
 * (the vocabulary's `secret` fields) join the device's credentials as what no device words in an
 * error may hold.
 */
export function runOperation(client: DeviceClient, operation: Operation, input: unknown, options: RunOptions = {}): Promise<OpResult> {
  return operation.invoke(contextFor(client, { ...options, secrets: [...(options.secrets ?? []), ...secretValues(operation.params, input)] }), input);
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
