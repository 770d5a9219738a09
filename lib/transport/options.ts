import { isIPv6 } from 'node:net';
import { inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { int, text, withDefault } from '../input/params';
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
  /** Most keep-alive connections to the device for request/response calls (default 4); commands have `CONTROL_CONNECTIONS` more of their own. */
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

/** The protocols a device is reached by (an ipcam-device's Protocol setting). */
export const PROTOCOLS = ['http', 'https'] as const;

export const DEFAULT_TIMEOUT = 10_000;
/** Longest timeout (ms): an hour; Node's timers cannot hold more than about 24 days anyway. */
export const MAX_TIMEOUT = 3_600_000;

export const MIN_PORT = 1;
export const MAX_PORT = 65535;
/** Longest host name (RFC 1035). */
export const HOST_MAX = 253;

const HOSTNAME_SOURCE = '[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\\.?';
const HOSTNAME = new RegExp(`^${HOSTNAME_SOURCE}$`);
/** Looks like an IPv6 address (at least two colons), bracketed or not; `isIP` decides. */
const IPV6_LIKE = '\\[?[0-9A-Fa-f.]*(:[0-9A-Fa-f.]*){2,}\\]?';
/**
 * What a Host setting looks like: a host name, an IPv4 or an IPv6 address, with no scheme, path,
 * user or port. The editor marks anything else; `resolveDeviceOptions` checks it exactly.
 */
export const HOST_PATTERN = new RegExp(`^(${HOSTNAME_SOURCE}|${IPV6_LIKE})$`);

/** A TCP port of a device (or of the event server's listener set in the editor). */
export const PORT = int({ min: MIN_PORT, max: MAX_PORT });
/** The Host setting as the editor checks it (`checkHost` then tells a scheme, a path or a port apart). */
export const HOST = text({ max: HOST_MAX + 2, pattern: HOST_PATTERN, patternText: 'an address only, e.g. 192.168.1.20 (no http://, path or port)' });
/** The Timeout setting: whole ms (the runtime also takes a fraction from code). */
export const TIMEOUT = withDefault(int({ min: 1, max: MAX_TIMEOUT }), DEFAULT_TIMEOUT);

/** Checks every setting and fills in defaults; throws `EINPUT` naming the first bad one. */
export function resolveDeviceOptions(options: DeviceOptions): ResolvedDeviceOptions {
  const host = checkHost(options.host);
  const protocol = options.protocol ?? 'http';
  if (protocol !== 'http' && protocol !== 'https') throw inputError(`Unknown protocol ${echo(protocol)}: use http or https`);
  const port = options.port ?? (protocol === 'https' ? 443 : 80);
  PORT.parse(port, 'Port');
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
  if (bare.length > HOST_MAX || !HOSTNAME.test(bare)) throw inputError(`Host ${echo(host)} is not a valid host name or IP address`);
  return bare;
}
