/**
 * What the ipcam-discover node and the device dialog's "Search network" share: the runtime's
 * discovery settings, which answers are deployed devices, and who may identify what.
 *
 * A found device is identified with credentials only ever towards its own address and port:
 * a deployed ipcam-device of that address and port through its own client (its stored
 * credentials, TLS and auth as deployed), anything else only with credentials typed for the
 * search, Digest only (lib/discovery/identify.ts). No stored password goes to another address.
 */
import { echo } from '../lib/errors/echo';
import { inputError } from '../lib/errors/errors';
import { discoverDevices, MAX_TARGETS, parseTargets, type DiscoveryOptions, type DiscoveryTarget } from '../lib/discovery/probe';
import { identifyDevices, searchClient, type IdentifiedDevice, type LentClient } from '../lib/discovery/identify';
import type { DeviceClient } from '../lib/transport/client';
import type { DeviceConfigNode } from './device-config';
import type { NodeAPI } from './red';

/** A device found, as a flow or the dialog gets it. */
export interface FoundDevice extends IdentifiedDevice {
  /** True when an ipcam-device of this runtime has the same host and port. */
  deployed: boolean;
}

export interface SearchRequest {
  durationMs: number;
  interface?: string | undefined;
  /** Unicast targets of the node itself; the runtime's (settings.js) are added. */
  targets?: readonly DiscoveryTarget[];
  identify: boolean;
  /** Typed for the search: used (Digest only) for devices that are not deployed. */
  credentials?: { username: string; password: string } | undefined;
  signal?: AbortSignal;
}

export interface SearchResult {
  devices: FoundDevice[];
  truncated: boolean;
}

/**
 * The runtime's discovery settings (settings.js `ipcamDiscovery: { targets, multicast }`):
 * addresses to probe by unicast besides the multicast (cameras on another subnet, simulators),
 * and whether to multicast at all. Bad settings are EINPUT naming them.
 */
export function runtimeDiscovery(RED: NodeAPI): { targets: DiscoveryTarget[]; multicast: boolean } {
  const raw = RED.settings?.['ipcamDiscovery'];
  if (raw === undefined || raw === null) return { targets: [], multicast: true };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw inputError('settings.js ipcamDiscovery must be an object like { targets: ["192.168.2.20"], multicast: true }');
  const settings = raw as Record<string, unknown>;
  const multicast = settings['multicast'];
  if (multicast !== undefined && typeof multicast !== 'boolean') throw inputError(`settings.js ipcamDiscovery.multicast must be true or false, got ${echo(multicast)}`);
  return { targets: parseTargets(settings['targets'], 'settings.js ipcamDiscovery.targets'), multicast: multicast !== false };
}

interface Deployed {
  node: DeviceConfigNode;
  client: DeviceClient;
}

/** The deployed ipcam-device nodes whose settings are valid, by `host|port` (host in lower case). */
function deployedDevices(RED: NodeAPI): Map<string, Deployed> {
  const out = new Map<string, Deployed>();
  RED.nodes.eachNode?.((def) => {
    if (def.type !== 'ipcam-device') return;
    const node = RED.nodes.getNode(def.id) as Partial<DeviceConfigNode> | null;
    if (!node || typeof node.getClient !== 'function') return;
    try {
      const client = node.getClient();
      const host = client.options.host.toLowerCase();
      const key = `${host}|${client.options.port}`;
      if (!out.has(key)) out.set(key, { node: node as DeviceConfigNode, client });
    } catch {
      // a device with a bad setting is no match for anything
    }
  });
  return out;
}

/** One search: probe, mark the deployed ones, identify where allowed. */
export async function search(RED: NodeAPI, request: SearchRequest): Promise<SearchResult> {
  const runtime = runtimeDiscovery(RED);
  const targets = [...(request.targets ?? []), ...runtime.targets].slice(0, MAX_TARGETS);
  const options: DiscoveryOptions = { durationMs: request.durationMs, multicast: runtime.multicast, targets };
  if (request.interface) options.interface = request.interface;
  if (request.signal) options.signal = request.signal;
  const found = await discoverDevices(options);
  const deployed = deployedDevices(RED);
  const deployedOf = (d: { address: string; port: number }): Deployed | undefined => deployed.get(`${d.address.toLowerCase()}|${d.port}`);

  let devices: IdentifiedDevice[] = found.devices;
  if (request.identify && devices.length > 0 && !request.signal?.aborted) {
    const credentials = request.credentials;
    devices = await identifyDevices(
      devices,
      (device): LentClient | undefined => {
        const own = deployedOf(device);
        // The deployed device's own client, only where it is reached the same way.
        if (own && !own.node.isClosing() && own.client.options.protocol === device.protocol) return { client: own.client };
        if (own || !credentials || credentials.password === '') return undefined;
        return searchClient(device, credentials);
      },
      request.signal,
    );
  }
  return { devices: devices.map((d) => ({ ...d, deployed: deployedOf(d) !== undefined })), truncated: found.truncated };
}
