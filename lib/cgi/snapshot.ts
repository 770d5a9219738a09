import { IpcamError, inputError } from '../errors';
import { echo } from '../echo';
import { checkText } from '../params';
import type { DeviceClient } from '../transport/client';
import { buildCgiPath, type CgiValue } from './codec';

export type SnapshotSource = 'jpg' | 'cgi';

export interface SnapshotRequest {
  /** `jpg`: `/jpg/image.jpg`, the default image; `cgi`: `/cgi-bin/admin/image` with `params`. */
  source?: SnapshotSource;
  /** Query parameters (product-dependent, e.g. `{ resolution: '640x480' }`); sent encoded. */
  params?: Record<string, CgiValue>;
  signal?: AbortSignal;
}

export interface Snapshot {
  image: Buffer;
  contentType: string;
}

const SOURCE_PATHS: Record<SnapshotSource, string> = {
  jpg: '/jpg/image.jpg',
  cgi: '/cgi-bin/admin/image',
};

/** Bounds of the product-dependent snapshot parameters (the spec gives none). */
export const SNAPSHOT_PARAMS_MAX = 32;
export const SNAPSHOT_NAME_MAX = 64;
export const SNAPSHOT_VALUE_MAX = 256;

export function checkSnapshotRequest(req: SnapshotRequest): { path: string } {
  const source = req.source ?? 'jpg';
  if (typeof source !== 'string' || !Object.hasOwn(SOURCE_PATHS, source)) throw inputError(`Unknown snapshot source ${echo(source)}: use jpg or cgi`);
  const params = req.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params) || Buffer.isBuffer(params)) throw inputError('Snapshot params must be an object of names and values');
  const entries = Object.entries(params);
  if (entries.length > SNAPSHOT_PARAMS_MAX) throw inputError(`At most ${SNAPSHOT_PARAMS_MAX} snapshot params, got ${entries.length}`);
  for (const [key, value] of entries) {
    // Names and values are percent-encoded: any character but a control one may be sent.
    checkText(key, { what: 'A snapshot param name', max: SNAPSHOT_NAME_MAX });
    const what = `Snapshot param ${echo(key)}`;
    if (typeof value === 'number' && !Number.isFinite(value)) throw inputError(`${what} must be a finite number, got ${echo(value)}`);
    if (typeof value === 'string') checkText(value, { what, max: SNAPSHOT_VALUE_MAX, min: 0 });
    else if (typeof value !== 'number' && typeof value !== 'boolean') throw inputError(`${what} must be text, a number or true/false`);
  }
  return { path: buildCgiPath(SOURCE_PATHS[source as SnapshotSource], params) };
}

/** What an answer that is not an image was, in our words (the content type is the device's text). */
function answerKind(contentType: string): string {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === '') return 'no content type';
  if (type === 'text/html') return 'an HTML page';
  if (type === 'text/plain') return 'plain text';
  if (type === 'text/xml' || type === 'application/xml') return 'XML';
  if (type === 'application/json') return 'JSON';
  return 'another content type';
}

/** Fetches one JPEG. An answer that is not an image is `EPARSE`, whatever its status. */
export async function takeSnapshot(client: DeviceClient, req: SnapshotRequest = {}): Promise<Snapshot> {
  const { path } = checkSnapshotRequest(req);
  const res = await client.request({ path, signal: req.signal });
  const isJpeg = res.body.length > 2 && res.body[0] === 0xff && res.body[1] === 0xd8;
  if (!isJpeg && !res.contentType.toLowerCase().startsWith('image/')) {
    throw new IpcamError('EPARSE', `The device did not answer ${path.split('?')[0]} with an image (it sent ${answerKind(res.contentType)})`);
  }
  return { image: res.body, contentType: isJpeg ? 'image/jpeg' : res.contentType.split(';')[0]!.trim() };
}
