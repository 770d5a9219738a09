import { IpcamError, inputError } from '../errors/errors';
import { checkImage, type ImageType } from '../safety/content-type';
import { echo } from '../errors/echo';
import { checkText } from '../input/params';
import type { DeviceClient } from '../transport/client';
import type { Param } from '../input/params';
import { runOp } from './runner';
import { defineOp, type CgiAnswer, type Operation } from './types';
import { channelPath } from '../xml/channel';
import { parseXml } from '../xml/codec';
import { failureOf } from '../xml/device-errors';
import { buildCgiPath, type CgiValue } from '../cgi/codec';

export const SNAPSHOT_SOURCES = ['jpg', 'cgi', 'xml'] as const;
/** How a snapshot node hands the image on: a Buffer, base64 text or a data URL. */
export const SNAPSHOT_FORMATS = ['buffer', 'base64', 'dataurl'] as const;
export type SnapshotSource = (typeof SNAPSHOT_SOURCES)[number];

export interface SnapshotRequest {
  /**
   * `jpg`: `/jpg/image.jpg`, the default image; `cgi`: `/cgi-bin/admin/image` with `params`;
   * `xml`: `GetSnapshot[/channel]` of the XML interface (XML-only cameras, recorder channels).
   */
  source?: SnapshotSource;
  /** `xml` only: the channel (1-256); none leaves the device's default. */
  channel?: unknown;
  /** Query parameters (product-dependent, e.g. `{ resolution: '640x480' }`); sent encoded. */
  params?: Record<string, CgiValue>;
  signal?: AbortSignal;
}

export interface Snapshot {
  image: Buffer;
  /** Read from the image's bytes, never from the device's header. */
  contentType: ImageType;
}

const SOURCE_PATHS: Record<SnapshotSource, string> = {
  jpg: '/jpg/image.jpg',
  cgi: '/cgi-bin/admin/image',
  xml: '/GetSnapshot',
};

/** Bounds of the product-dependent snapshot parameters (the spec gives none). */
export const SNAPSHOT_PARAMS_MAX = 32;
export const SNAPSHOT_NAME_MAX = 64;
export const SNAPSHOT_VALUE_MAX = 256;

export function checkSnapshotRequest(req: SnapshotRequest): { path: string } {
  const source = req.source ?? 'jpg';
  if (typeof source !== 'string' || !Object.hasOwn(SOURCE_PATHS, source)) throw inputError(`Unknown snapshot source ${echo(source)}: use ${SNAPSHOT_SOURCES.join(', ')}`);
  const channelGiven = req.channel !== undefined && req.channel !== null && req.channel !== '';
  if (source === 'xml') {
    if (req.params !== undefined && req.params !== null && (typeof req.params !== 'object' || Object.keys(req.params).length > 0)) throw inputError('GetSnapshot (source xml) takes no params: use channel');
    return { path: channelPath(SOURCE_PATHS.xml, req.channel) };
  }
  if (channelGiven) throw inputError(`A snapshot channel is for the xml source (GetSnapshot), not ${source}`);
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
  if (type === 'image/svg+xml') return 'SVG';
  if (type.startsWith('image/')) return 'an image type';
  return 'another content type';
}

/** GetSnapshot's failure document as its error; undefined for anything else (a page that is no XML included: that is EPARSE below). */
function failureDocument(body: Buffer, status: number, secrets: readonly string[]): IpcamError | undefined {
  if (!/^\s*(\uFEFF)?</.test(body.subarray(0, 64).toString('utf8'))) return undefined;
  let root: ReturnType<typeof parseXml>;
  try {
    root = parseXml(body);
  } catch {
    return undefined;
  }
  return failureOf(root, { status, secrets });
}

/** A snapshot request as the operation's parameter: the checked target and whether it is GetSnapshot. */
interface SnapshotTarget {
  path: string;
  xml: boolean;
}

const targetParam: Param<SnapshotTarget> = {
  limits: { type: 'object', fields: {} },
  parse(value) {
    const req = (typeof value === 'object' && value !== null ? value : {}) as SnapshotRequest;
    return { path: checkSnapshotRequest(req).path, xml: req.source === 'xml' };
  },
};

/** The picture of an answer, by its bytes; GetSnapshot's failure document is its error. */
function pictureOf(answer: CgiAnswer, target: SnapshotTarget): Snapshot {
  const checked = checkImage(answer.body);
  if (target.xml && !('type' in checked)) {
    const failure = failureDocument(answer.body, answer.status, answer.secrets);
    if (failure) throw failure;
    if (answer.status < 200 || answer.status >= 300) throw new IpcamError('EHTTP', `The device answered HTTP ${answer.status} to ${target.path}`, { status: answer.status });
  }
  if (!('type' in checked)) {
    throw new IpcamError('EPARSE', `The device did not answer ${target.path.split('?')[0]} with a JPEG or PNG picture (it sent ${checked.problem}; its header said ${answerKind(answer.contentType)})`);
  }
  return { image: answer.body, contentType: checked.type };
}

/**
 * One picture (`/jpg/image.jpg`, `/cgi-bin/admin/image` or GetSnapshot). GetSnapshot answers a
 * failure document (with 200 or 400) where it has no picture to give; a text answer with an
 * error line (`# Error: ...` in a 200) is the device refusing: EDEVICE with its words.
 */
export const snapshot = defineOp({
  name: 'snapshot',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Takes one JPEG or PNG picture',
  params: targetParam,
  request: (t) => ({ path: t.path, what: 'snapshot', ...(t.xml && { allowHttpError: true }) }),
  parse: (answer, t) => ({ payload: pictureOf(answer, t) }),
});

/** The snapshot call of ipcam-snapshot, run by the one runner; not offered by ipcam-request. */
export const SNAPSHOT_OPERATIONS: readonly Operation[] = [snapshot];

/**
 * Fetches one picture. Its type is read from its bytes: a whole JPEG or PNG, whatever the device
 * calls it; anything else (HTML, SVG, an empty or cut-short body) is `EPARSE`, whatever its status.
 */
export function takeSnapshot(client: DeviceClient, req: SnapshotRequest = {}): Promise<Snapshot> {
  const { signal, ...request } = req;
  return runOp(client, snapshot, request, { signal });
}
