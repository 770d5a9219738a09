import { isIP } from 'node:net';
import { inputError } from '../errors';
import { echo } from '../echo';
import { checkText, checkWhole } from '../params';
import type { DeviceClient } from '../transport/client';
import { xmlCall } from './call';
import { buildDocument, xml } from './codec';

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

export function checkHttpPostTarget(target: HttpPostTarget): Required<HttpPostTarget> {
  const serverIp = target.serverIp;
  if (typeof serverIp !== 'string' || serverIp.length > SERVER_NAME_MAX || (isIP(serverIp) === 0 && !/^[A-Za-z0-9.-]+$/.test(serverIp))) {
    throw inputError(`Server address ${echo(serverIp)} is not an IP address or host name`);
  }
  if (typeof target.serverPort !== 'number') throw inputError(`Server port must be a number, got ${echo(target.serverPort)}`);
  const serverPort = checkWhole(target.serverPort, 'Server port', 1, 65535);
  const keepalive = checkWhole(target.keepalive ?? 30, 'Keep-alive interval (s)', 30, 120);
  const path = checkText(target.path ?? '/', { what: 'Event path', max: POST_PATH_MAX, xml: true });
  if (!path.startsWith('/')) throw inputError(`Path must start with /, got ${echo(path)}`);
  return { serverIp, serverPort, path, keepalive, enabled: target.enabled !== false };
}

/** Points the device's HTTP POST events at a server (field notes: `httpPost` block). */
export async function setHttpPostConfig(client: DeviceClient, target: HttpPostTarget, signal?: AbortSignal): Promise<Required<HttpPostTarget>> {
  const t = checkHttpPostTarget(target);
  const body = buildDocument('1.0', [
    xml.el('httpPost', [
      xml.bool('bSwitch', t.enabled),
      xml.str('serverIp', t.serverIp),
      xml.text('serverPort', String(t.serverPort), 'uint16'),
      xml.uint('keepaliveTimeval', t.keepalive),
      xml.str('URL', t.path),
    ]),
  ]);
  await xmlCall(client, { path: '/SetHttpPostConfig', body, signal });
  return t;
}
