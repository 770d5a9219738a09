import { IpcamError } from '../errors/errors';
import { shape } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { child, toTyped, type XmlElement, type XmlValue } from '../xml/codec';
import { listParams } from './param-calls';
import { runOp, type Reporting } from './runner';
import { defineOp, type Operation } from './types';

/** The object without its undefined and empty-text fields (device answers leave many blank). */
function withoutEmpty<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== '')) as T;
}

/** GetDeviceInfo: asked with GET, no body (spec 4.7). */
export const DEVICE_INFO_PATH = '/GetDeviceInfo';

/** The `deviceInfo` block of GetDeviceInfo, typed, with the fields flows use most named. */
export interface XmlDeviceInfo {
  name?: string;
  model?: string;
  brand?: string;
  firmware?: string;
  hardware?: string;
  mac?: string;
  sn?: string;
  /** The device's `apiVersion` field, else the `version` of the answer's root. */
  apiVersion?: string;
  /** Every field the device sent, typed per its `type` attributes. */
  fields: Record<string, XmlValue>;
}

/** Reads a GetDeviceInfo answer. */
export function parseDeviceInfo(root: XmlElement): XmlDeviceInfo {
  const block = child(root, 'deviceInfo') ?? root;
  const typed = toTyped(block);
  const fields = typeof typed === 'object' && !Array.isArray(typed) ? typed : {};
  const text = (name: string): string | undefined => {
    const value = fields[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  };
  return withoutEmpty({
    name: text('deviceName'),
    model: text('model'),
    brand: text('brand'),
    // Real firmware names it softwareVersion (field notes); some older firmware firmwareVersion.
    firmware: text('softwareVersion') ?? text('firmwareVersion'),
    hardware: text('hardwareVersion'),
    mac: text('mac'),
    sn: text('sn'),
    apiVersion: text('apiVersion') ?? root.attrs['version'],
    fields,
  });
}

/**
 * GetDeviceInfo as the library reads it (the heartbeat, device identity): the named fields beside
 * every field. `ipcam-request`'s `getDeviceInfo` gives the same answer merged into one object.
 */
export const deviceInfoOp = defineOp({
  name: 'deviceInfo',
  api: 'xml',
  access: 'view',
  class: 'read',
  summary: 'Reads who the device is (GetDeviceInfo), typed, for the heartbeat and device identity',
  params: shape({}),
  request: () => ({ path: DEVICE_INFO_PATH, method: 'GET', repeatable: true }),
  parse: (root) => ({ payload: parseDeviceInfo(root) }),
});

/** The device information calls of the library, run by the one runner; not offered by ipcam-request. */
export const DEVICE_INFO_OPERATIONS: readonly Operation[] = [deviceInfoOp];

export function getDeviceInfo(client: DeviceClient, signal?: AbortSignal, reporting: Reporting = {}): Promise<XmlDeviceInfo> {
  return runOp(client, deviceInfoOp, {}, { ...reporting, signal });
}

/** Who the device says it is, from whichever interface it speaks. */
export interface DeviceIdentity {
  interface: 'xml' | 'cgi';
  model?: string;
  firmware?: string;
  name?: string;
  mac?: string;
  sn?: string;
}

/**
 * Asks GetDeviceInfo (XML interface) and falls back to the CGI parameters when the device does
 * not know that operation. Credentials, TLS and network errors are not masked by the fallback.
 */
export async function identifyDevice(client: DeviceClient, signal?: AbortSignal, reporting: Reporting = {}): Promise<DeviceIdentity> {
  try {
    const info = await getDeviceInfo(client, signal, reporting);
    return withoutEmpty<DeviceIdentity>({ interface: 'xml', model: info.model, firmware: info.firmware, name: info.name, mac: info.mac, sn: info.sn });
  } catch (err) {
    if (!(err instanceof IpcamError) || !['EHTTP', 'EPARSE', 'EDEVICE'].includes(err.code)) throw err;
  }
  const params = await listParams(client, ['Brand', 'Properties', 'Network'], { ...reporting, level: 'admin', signal });
  return withoutEmpty<DeviceIdentity>({
    interface: 'cgi',
    model: params['Brand.ProdFullName'] ?? params['Brand.ProdShortName'],
    firmware: params['Properties.Firmware.Version'],
    name: params['Brand.ProdNbr'],
    mac: params['Network.eth0.MACAddress'],
    sn: params['Properties.System.SerialNumber'],
  });
}
