/**
 * Identifying the devices a search found: who each says it is (XML GetDeviceInfo, else the CGI
 * parameters, as "Test connection" does), bounded in time and in parallel requests.
 *
 * Which client asks is the caller's choice (the node glue knows the deployed devices); this
 * module only builds the client for a device nobody has configured: towards the sender's own
 * address and port, Digest only, TLS verified. A password typed for a search thus never leaves
 * in clear, to a rogue answer or anyone else.
 */
import { identifyDevice, type DeviceIdentity } from '../ops/device-info';
import { IpcamError } from '../errors/errors';
import { DeviceClient } from '../transport/client';
import type { DiscoveredDevice } from './probe';

/** Parallel identifications, and the time of one device's request. */
export const IDENTIFY_PARALLEL = 8;
export const IDENTIFY_TIMEOUT_MS = 3000;
/** The whole identify phase ends by then (ms); devices not reached stay unidentified. */
export const IDENTIFY_DEADLINE_MS = 10_000;

export interface IdentifiedDevice extends DiscoveredDevice {
  interface?: DeviceIdentity['interface'];
  model?: string;
  firmware?: string;
  mac?: string;
  /** Why identifying failed (code and our own text, never a device's or a secret). */
  error?: { code: string; message: string };
}

/** A client lent for one identification; `close` is called when it is done (for a client made for it). */
export interface LentClient {
  client: DeviceClient;
  close?: () => Promise<void>;
}

/** A client of its own for a device found, with a typed username and password (Digest only). */
export function searchClient(device: DiscoveredDevice, credentials: { username: string; password: string }): LentClient {
  const client = new DeviceClient({
    host: device.address,
    port: device.port,
    protocol: device.protocol,
    auth: 'digest',
    tlsVerify: true,
    username: credentials.username,
    password: credentials.password,
    timeout: IDENTIFY_TIMEOUT_MS,
    connections: 1,
  });
  return { client, close: () => client.close() };
}

/**
 * Identifies each device `clientFor` gives a client for, at most IDENTIFY_PARALLEL at a time,
 * all within IDENTIFY_DEADLINE_MS (or until `signal`); the others come back as found.
 */
export async function identifyDevices(devices: readonly DiscoveredDevice[], clientFor: (device: DiscoveredDevice) => LentClient | undefined, signal?: AbortSignal): Promise<IdentifiedDevice[]> {
  const out: IdentifiedDevice[] = devices.map((d) => ({ ...d }));
  const deadline = AbortSignal.timeout(IDENTIFY_DEADLINE_MS);
  const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < out.length && !stop.aborted) {
      const device = out[next++] as IdentifiedDevice;
      let lent: LentClient | undefined;
      try {
        lent = clientFor(device);
        if (!lent) continue;
        const identity = await identifyDevice(lent.client, stop);
        device.interface = identity.interface;
        if (identity.model !== undefined) device.model = identity.model;
        if (identity.firmware !== undefined) device.firmware = identity.firmware;
        if (identity.mac !== undefined) device.mac = identity.mac;
      } catch (err) {
        const e = err instanceof IpcamError ? err : new IpcamError('ECONN', 'Could not identify the device');
        device.error = { code: e.code, message: e.message };
      } finally {
        await lent?.close?.().catch(() => undefined);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IDENTIFY_PARALLEL, out.length) }, worker));
  return out;
}
