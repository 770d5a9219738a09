import { withSecrets } from '../echo';
import { IpcamError } from '../errors';
import type { DeviceClient } from '../transport/client';
import { parseXml, type XmlElement } from './codec';
import { failureOf } from './device-errors';
import { ElementBudget } from './well-formed';

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
}

/**
 * One XML-interface exchange: sends the document, reads the answer whatever the HTTP status,
 * and turns a failure document into `EDEVICE`.
 */
export async function xmlCall(client: DeviceClient, call: XmlCall): Promise<XmlElement> {
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
