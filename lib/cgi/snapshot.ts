import { IpcamError, inputError } from '../errors';
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

export function checkSnapshotRequest(req: SnapshotRequest): { path: string } {
  const source = req.source ?? 'jpg';
  if (!Object.hasOwn(SOURCE_PATHS, source)) throw inputError(`Unknown snapshot source "${String(source)}": use jpg or cgi`);
  const params = req.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw inputError('Snapshot params must be an object of names and values');
  for (const [key, value] of Object.entries(params)) {
    if (key === '') throw inputError('Snapshot params have an empty name');
    if (!['string', 'number', 'boolean'].includes(typeof value)) throw inputError(`Snapshot param "${key}" must be text, a number or true/false`);
  }
  return { path: buildCgiPath(SOURCE_PATHS[source], params) };
}

/** Fetches one JPEG. An answer that is not an image is `EPARSE`, whatever its status. */
export async function takeSnapshot(client: DeviceClient, req: SnapshotRequest = {}): Promise<Snapshot> {
  const { path } = checkSnapshotRequest(req);
  const res = await client.request({ path, signal: req.signal });
  const isJpeg = res.body.length > 2 && res.body[0] === 0xff && res.body[1] === 0xd8;
  if (!isJpeg && !res.contentType.toLowerCase().startsWith('image/')) {
    throw new IpcamError('EPARSE', `The device did not answer with an image (content type "${res.contentType || 'none'}")`);
  }
  return { image: res.body, contentType: isJpeg ? 'image/jpeg' : res.contentType.split(';')[0]!.trim() };
}
