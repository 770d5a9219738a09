import { IpcamError } from './errors';
import { withoutEmpty } from './object';
import { listParams } from './ops/param-calls';
import type { DeviceClient } from './transport/client';
import { getDeviceInfo } from './ops/device-info';
import type { Reporting } from './ops/runner';

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
