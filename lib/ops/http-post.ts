/**
 * Where a camera posts its events (field notes: the `httpPost` block of Get/SetHttpPostConfig).
 * One parameter shape, one request builder and one parser serve both the plate-event node's
 * "configure the device" and the `getHttpPostConfig` / `setHttpPostConfig` operations.
 */
import { isIP } from 'node:net';
import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { bool, int, shape, text, withDefault, withLabels, type Param, type ShapeValue } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { runOp } from './runner';
import { defineOp, type OpRequest } from './types';
import { buildDocument, child, toTyped, xml, type XmlElement, type XmlValue } from '../xml/codec';

/** Where the device posts its events (SetHttpPostConfig). */
export interface HttpPostTarget {
  /** Address of the event server as the device reaches it. */
  serverIp: string;
  serverPort: number;
  /** Path on the server (default `/`). */
  path?: string;
  /** Seconds between keep-alive posts, 30-120 (default 30). */
  keepalive?: number;
  /** Turn posting on (default true). */
  enabled?: boolean;
}

/** Longest host name (RFC 1035) and longest event path sent (the spec gives none). */
export const SERVER_NAME_MAX = 253;
export const POST_PATH_MAX = 256;
export const POST_PORT = { min: 1, max: 65535 } as const;
/** Field notes: `keepaliveTimeval` 30-120 s. */
export const KEEPALIVE = { min: 30, max: 120 } as const;
const HOST_NAME = /^[A-Za-z0-9.-]+$/;

/** An IP address (v4 or v6) or a host name: what the device is given to reach the server. */
function serverAddress(): Param<string> {
  const base = text({ max: SERVER_NAME_MAX, pattern: /^[A-Za-z0-9.:-]+$/, patternText: 'an IP address or host name' });
  return {
    limits: base.limits,
    parse(value, field) {
      const checked = base.parse(value, field);
      if (isIP(checked) === 0 && !HOST_NAME.test(checked)) throw inputError(`${field} ${echo(checked)} is not an IP address or host name`);
      return checked;
    },
  };
}

/** The parameters of `setHttpPostConfig`. */
export const HTTP_POST_PARAMS = shape({
  server: serverAddress(),
  port: int(POST_PORT),
  path: withDefault(text({ max: POST_PATH_MAX, xml: true, pattern: /^\//, patternText: 'a path starting with /' }), '/'),
  keepalive: withDefault(int(KEEPALIVE), 30),
  enabled: withDefault(bool(), true),
});
export type HttpPostParams = ShapeValue<typeof HTTP_POST_PARAMS.fields>;

export const SET_HTTP_POST_PATH = '/SetHttpPostConfig';
export const GET_HTTP_POST_PATH = '/GetHttpPostConfig';

/** The SetHttpPostConfig document of checked parameters. */
export function httpPostDocument(p: HttpPostParams): string {
  return buildDocument('1.0', [
    xml.el('httpPost', [
      xml.bool('bSwitch', p.enabled),
      xml.str('serverIp', p.server),
      xml.text('serverPort', String(p.port), 'uint16'),
      xml.uint('keepaliveTimeval', p.keepalive),
      xml.str('URL', p.path),
    ]),
  ]);
}

/** The configuration as GetHttpPostConfig tells it. */
export interface HttpPostConfig {
  enabled: boolean;
  server: string;
  port: number;
  path: string;
  keepalive?: number;
  /** `protocolType`, e.g. `HTTP`. */
  protocol?: string;
  /** Read-only `onlineStatus`, when the device tells it. */
  online?: XmlValue;
  /** The newer firmware's `httpPostV2` block, typed as sent (up to 3 URL entries). */
  v2?: XmlValue;
}

/** Reads a GetHttpPostConfig answer (`httpPost`, and `httpPostV2` where the firmware has it). */
export function parseHttpPostConfig(root: XmlElement): HttpPostConfig {
  const block = child(root, 'httpPost');
  const typed = block ? toTyped(block) : undefined;
  const f = typeof typed === 'object' && typed !== null && !Array.isArray(typed) ? typed : undefined;
  if (!f) throw new IpcamError('EPARSE', 'GetHttpPostConfig answered no httpPost block');
  const word = (v: XmlValue | undefined): string | undefined => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
  const whole = (v: XmlValue | undefined): number | undefined => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,9}$/.test(v.trim()) ? Number(v) : undefined;
    return n;
  };
  const port = whole(f['serverPort']);
  if (port === undefined) throw new IpcamError('EPARSE', 'GetHttpPostConfig answered no readable serverPort');
  const config: HttpPostConfig = {
    enabled: f['bSwitch'] === true || f['bSwitch'] === 'true',
    server: word(f['serverIp']) ?? '',
    port,
    path: word(f['URL']) ?? '/',
  };
  const keepalive = whole(f['keepaliveTimeval']);
  if (keepalive !== undefined) config.keepalive = keepalive;
  const protocol = word(f['protocolType']);
  if (protocol !== undefined) config.protocol = protocol;
  if (f['onlineStatus'] !== undefined) config.online = f['onlineStatus'];
  const v2 = child(root, 'httpPostV2');
  if (v2) config.v2 = toTyped(v2);
  return config;
}

/**
 * Field notes: recorders have no SetHttpPostConfig (their push is set in their web page). An
 * "invalid request" or "unsupported" answer says so.
 */
export function explainHttpPostFailure(err: unknown): unknown {
  if (!(err instanceof IpcamError) || err.code !== 'EDEVICE' || (err.deviceCode !== 1 && err.deviceCode !== 11)) return err;
  return new IpcamError('EDEVICE', `${err.message}; recorders have no SetHttpPostConfig: set their event push in their web page`, {
    ...(err.status !== undefined && { status: err.status }),
    ...(err.deviceCode !== undefined && { deviceCode: err.deviceCode }),
    ...(err.deviceDesc !== undefined && { deviceDesc: err.deviceDesc }),
  });
}

export function checkHttpPostTarget(target: HttpPostTarget): Required<HttpPostTarget> {
  const p = HTTP_POST_PARAMS.parse({ server: target.serverIp, port: target.serverPort, path: target.path, keepalive: target.keepalive, enabled: target.enabled }, 'event target');
  return { serverIp: p.server, serverPort: p.port, path: p.path, keepalive: p.keepalive, enabled: p.enabled };
}

/** The SetHttpPostConfig request of checked parameters. */
export function setHttpPostRequest(p: HttpPostParams): OpRequest {
  return { path: SET_HTTP_POST_PATH, xml: httpPostDocument(p) };
}

/** Points the device's HTTP POST events at a server (field notes: `httpPost` block): `ipcam-request`'s entry and the plate event node's call. */
export const setHttpPostConfigOp = defineOp({
  name: 'setHttpPostConfig',
  label: 'Set the event post server',
  api: 'xml',
  access: 'admin',
  class: 'outbound',
  summary: 'Points the device\'s event posts at a server (cameras; recorders set this in their web page)',
  params: withLabels(HTTP_POST_PARAMS, { server: 'Server', port: 'Port', path: 'Path', keepalive: 'Keep-alive (s)', enabled: 'Posting on' }),
  async run(ctx, p) {
    try {
      await ctx.xml(setHttpPostRequest(p));
    } catch (err) {
      throw explainHttpPostFailure(err);
    }
    return { payload: { enabled: p.enabled, server: p.server, port: p.port, path: p.path, keepalive: p.keepalive } };
  },
});

/** Points the device's HTTP POST events at a server, by the entry above. */
export async function setHttpPostConfig(client: DeviceClient, target: HttpPostTarget, signal?: AbortSignal): Promise<Required<HttpPostTarget>> {
  const t = checkHttpPostTarget(target);
  await runOp(client, setHttpPostConfigOp, { server: t.serverIp, port: t.serverPort, path: t.path, keepalive: t.keepalive, enabled: t.enabled }, { signal });
  return t;
}
