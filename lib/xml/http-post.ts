import { isIP } from 'node:net';
import { inputError } from '../errors';
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

export function checkHttpPostTarget(target: HttpPostTarget): Required<HttpPostTarget> {
  if (typeof target.serverIp !== 'string' || (isIP(target.serverIp) === 0 && !/^[A-Za-z0-9.-]+$/.test(target.serverIp))) {
    throw inputError(`Server address ${JSON.stringify(target.serverIp)} is not an IP address or host name`);
  }
  if (!Number.isInteger(target.serverPort) || target.serverPort < 1 || target.serverPort > 65535) throw inputError(`Server port must be 1-65535, got ${String(target.serverPort)}`);
  const keepalive = target.keepalive ?? 30;
  if (!Number.isInteger(keepalive) || keepalive < 30 || keepalive > 120) throw inputError(`Keep-alive interval must be 30-120 s, got ${String(target.keepalive)}`);
  const path = target.path ?? '/';
  if (typeof path !== 'string' || !path.startsWith('/')) throw inputError(`Path must start with /, got ${JSON.stringify(target.path)}`);
  return { serverIp: target.serverIp, serverPort: target.serverPort, path, keepalive, enabled: target.enabled !== false };
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
