import { withoutEmpty } from '../object';
import { shape } from '../params';
import type { DeviceClient } from '../transport/client';
import { child, toTyped, type XmlElement, type XmlValue } from '../xml/codec';
import { runOp, type Reporting } from './runner';
import { defineOp, type Operation } from './types';

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
