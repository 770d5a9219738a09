import { isIPv6 } from 'node:net';
import { inputError } from '../errors';
import { echo } from '../echo';
import type { AuthMode } from './auth';

/** How to reach one camera or recorder; the settings and credentials of an `ipcam-device`. */
export interface DeviceOptions {
  host: string;
  /** Default 80 for http, 443 for https. */
  port?: number;
  protocol?: 'http' | 'https';
  auth?: AuthMode;
  username?: string;
  password?: string;
  /** Verify the device's TLS certificate (default true). */
  tlsVerify?: boolean;
  /** PEM of a CA to trust besides the system ones (self-signed device certificates). */
  ca?: string;
  /** Connect, header and body timeout in ms (default 10000). */
  timeout?: number;
  /** Most keep-alive connections to the device for request/response calls (default 4). */
  connections?: number;
}

export interface ResolvedDeviceOptions {
  host: string;
  port: number;
  protocol: 'http' | 'https';
  auth: AuthMode;
  username: string;
  password: string;
  tlsVerify: boolean;
  ca?: string;
  timeout: number;
  connections: number;
  /** `http://host:port`, IPv6 hosts in brackets. */
  origin: string;
}

export const DEFAULT_TIMEOUT = 10_000;
/** Longest timeout (ms): an hour; Node's timers cannot hold more than about 24 days anyway. */
export const MAX_TIMEOUT = 3_600_000;

const HOSTNAME = /^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/;

/** Checks every setting and fills in defaults; throws `EINPUT` naming the first bad one. */
export function resolveDeviceOptions(options: DeviceOptions): ResolvedDeviceOptions {
  const host = checkHost(options.host);
  const protocol = options.protocol ?? 'http';
  if (protocol !== 'http' && protocol !== 'https') throw inputError(`Unknown protocol ${echo(protocol)}: use http or https`);
  const port = options.port ?? (protocol === 'https' ? 443 : 80);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw inputError(`Port must be a whole number from 1 to 65535, got ${echo(options.port)}`);
  const auth = options.auth ?? 'auto';
  if (auth !== 'auto' && auth !== 'basic' && auth !== 'digest') throw inputError(`Unknown auth ${echo(auth)}: use auto, basic or digest`);
  const timeout = options.timeout ?? DEFAULT_TIMEOUT;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TIMEOUT) {
    throw inputError(`Timeout must be a number of milliseconds above 0, at most ${MAX_TIMEOUT}, got ${echo(options.timeout)}`);
  }
  const connections = options.connections ?? 4;
  if (!Number.isInteger(connections) || connections < 1) throw inputError('connections must be a whole number of at least 1');
  const username = options.username ?? '';
  const password = options.password ?? '';
  if (typeof username !== 'string' || typeof password !== 'string') throw inputError('Username and password must be text');
  if (username.includes(':')) throw inputError('The username must not contain ":" (HTTP authentication cannot carry it)');

  const resolved: ResolvedDeviceOptions = {
    host,
    port,
    protocol,
    auth,
    username,
    password,
    tlsVerify: options.tlsVerify !== false,
    timeout,
    connections,
    origin: `${protocol}://${isIPv6(host) ? `[${host}]` : host}:${port}`,
  };
  if (options.ca !== undefined && typeof options.ca !== 'string') throw inputError('The CA must be PEM text');
  if (options.ca !== undefined && options.ca.trim() !== '') resolved.ca = options.ca;
  return resolved;
}

/** The settings that decide where credentials go and who can read them on the way. */
export type DestinationSetting = 'host' | 'port' | 'protocol' | 'auth' | 'TLS verification' | 'CA';

/**
 * The settings in which `b` reaches another destination than `a`, or reaches it another way:
 * host (any case), port, protocol, auth mode, TLS verification and, for https, the CA (http uses
 * none). Empty when both are the same device reached the same way. Defaults are already filled
 * in by `resolveDeviceOptions` (a blank port is 80 or 443 by protocol).
 */
export function destinationChanges(a: ResolvedDeviceOptions, b: ResolvedDeviceOptions): DestinationSetting[] {
  const changed: DestinationSetting[] = [];
  if (a.host.toLowerCase() !== b.host.toLowerCase()) changed.push('host');
  if (a.port !== b.port) changed.push('port');
  if (a.protocol !== b.protocol) changed.push('protocol');
  if (a.auth !== b.auth) changed.push('auth');
  if (a.tlsVerify !== b.tlsVerify) changed.push('TLS verification');
  const ca = (o: ResolvedDeviceOptions): string | undefined => (o.protocol === 'https' ? o.ca : undefined);
  if (ca(a) !== ca(b)) changed.push('CA');
  return changed;
}

function checkHost(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw inputError('Host is empty: give the device address, e.g. 192.168.1.20');
  const host = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) throw inputError(`Host ${echo(host)} has a scheme: give the address only and choose http or https in Protocol`);
  if (/[/?#@\s]/.test(host)) throw inputError(`Host ${echo(host)} has a path or other characters: give the address only, e.g. 192.168.1.20`);
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIPv6(bare)) return bare;
  if (bare.includes(':')) throw inputError(`Host ${echo(host)} has a port: put the port in the Port setting`);
  if (bare.length > 253 || !HOSTNAME.test(bare)) throw inputError(`Host ${echo(host)} is not a valid host name or IP address`);
  return bare;
}
