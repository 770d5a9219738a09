import { withoutEmpty } from '../object';
import type { DeviceClient } from '../transport/client';
import { child, toTyped, type XmlValue } from './codec';
import { xmlCall } from './call';

/** The `deviceInfo` block of GetDeviceInfo, typed, with the fields flows use most named. */
export interface XmlDeviceInfo {
  name?: string;
  model?: string;
  brand?: string;
  firmware?: string;
  hardware?: string;
  mac?: string;
  sn?: string;
  /** Every field the device sent, typed per its `type` attributes. */
  fields: Record<string, XmlValue>;
}

export async function getDeviceInfo(client: DeviceClient, signal?: AbortSignal): Promise<XmlDeviceInfo> {
  const root = await xmlCall(client, { path: '/GetDeviceInfo', method: 'GET', signal });
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
    firmware: text('firmwareVersion') ?? text('softwareVersion'),
    hardware: text('hardwareVersion'),
    mac: text('mac'),
    sn: text('sn'),
    fields,
  });
}
