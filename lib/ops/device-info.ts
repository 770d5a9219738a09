import { withoutEmpty } from '../object';
import type { DeviceClient } from '../transport/client';
import { child, toTyped, type XmlElement, type XmlValue } from '../xml/codec';
import { sendXml } from './runner';

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

export async function getDeviceInfo(client: DeviceClient, signal?: AbortSignal): Promise<XmlDeviceInfo> {
  return parseDeviceInfo(await sendXml(client, { path: DEVICE_INFO_PATH, method: 'GET', repeatable: true }, signal));
}
