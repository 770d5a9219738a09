/**
 * The one runner of the operation table: validate (EINPUT, nothing sent) -> send through the
 * device client -> map errors (a CGI error line in a 200 answer and an XML failure document are
 * EDEVICE) -> parse.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { buildCgiPath, cgiFailure } from '../cgi/codec';
import { IpcamError, inputError } from '../errors';
import { echo } from '../echo';
import type { DeviceClient, RequestOptions } from '../transport/client';
import { xmlCall } from '../xml/call';
import type { CgiAnswer, OpContext, OpRequest, OpResult, Operation } from './types';

export interface RunOptions {
  signal?: AbortSignal;
  /** Progress of long operations (upload, firmware), 0-100. */
  onProgress?: (percent: number, stage: string) => void;
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

export function contextFor(client: DeviceClient, options: RunOptions = {}): OpContext {
  const signal = options.signal;
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
      if (res.status === 200 && !request.content && isText(res.contentType)) {
        const failure = cgiFailure(res.body, { what: request.what ?? `request ${request.path}`, names: request.names ?? [], secrets: [...client.secrets, ...(request.secrets ?? [])] });
        if (failure) throw failure;
      }
      const answer: CgiAnswer = { status: res.status, contentType: res.contentType, headers: res.headers, body: res.body, text: res.body.toString('utf8') };
      return answer;
    },
    xml(request) {
      return xmlCall(client, { path: targetOf(request), method: request.method ?? 'POST', ...(request.xml !== undefined && { body: request.xml }), ...(signal && { signal }) });
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

/** Runs `operation` with `input` (its parameters) on `client`. */
export function runOperation(client: DeviceClient, operation: Operation, input: unknown, options: RunOptions = {}): Promise<OpResult> {
  return operation.invoke(contextFor(client, options), input);
}

/**
 * Which operation a node runs. The node's own setting names it, or is `msg` and the message
 * names it; a destructive operation runs only from a node whose own setting names it.
 */
export function chooseOperation(table: ReadonlyMap<string, Operation>, setting: string, fromMsg: unknown): Operation {
  const fromSetting = setting !== 'msg';
  if (fromSetting && fromMsg !== undefined && fromMsg !== null && fromMsg !== '' && fromMsg !== setting) {
    throw inputError(`This node runs ${echo(setting)}: msg.payload.operation ${echo(fromMsg)} can only choose when its Operation setting is msg; nothing was sent`);
  }
  const name = fromSetting ? setting : fromMsg;
  if (!fromSetting && (name === undefined || name === null || name === '')) throw inputError('This node takes its operation from msg.payload.operation, and none was given');
  const op = typeof name === 'string' ? table.get(name.trim()) : undefined;
  if (!op) throw inputError(`Unknown operation ${echo(name)}`);
  if (!fromSetting && op.destructive) {
    throw inputError(`${op.name} changes or destroys something on the device: it runs only from a node whose Operation setting names it, never from msg.payload.operation; nothing was sent`);
  }
  return op;
}
