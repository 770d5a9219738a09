import { echo } from '../lib/errors/echo';
import { inputError } from '../lib/errors/errors';
import type { DeviceConfigNode } from './device-config';
import type { Node, NodeAPI } from './red';

/** Longest `msg.device` looked up: names and ids are short; anything longer names nothing. */
export const MSG_DEVICE_MAX = 200;
/** Most ids listed in the error of an ambiguous name. */
const IDS_LISTED = 5;

const USAGE = 'msg.device names a deployed ipcam-device node by its name or id';

/**
 * The ipcam-device a message names in `msg.device`: the deployed device node of that id, or the
 * one deployed device node of that name. A message can only choose among configured devices, so
 * a flow never sends a stored password to an address a message brings: anything else (an
 * object, a URL, a host, an empty text, a name no device or several devices have) is EINPUT,
 * before anything is sent. A device scoped to a flow is named only from within that flow, as
 * the editor offers it.
 */
export function deviceNamed(RED: NodeAPI, user: Pick<Node, 'z'>, value: unknown): DeviceConfigNode {
  if (typeof value !== 'string') throw inputError(`${USAGE}, not ${echo(value)}`);
  const wanted = value.trim();
  if (wanted === '') throw inputError(`msg.device is empty: ${USAGE}`);
  if (looksLikeAddress(wanted)) throw inputError(`msg.device holds an address: a message cannot bring a host or credentials; ${USAGE}`);
  if (wanted.length > MSG_DEVICE_MAX) throw inputError(`msg.device is longer than ${MSG_DEVICE_MAX} characters: ${USAGE}`);

  const byId = visibleDevice(RED, user, wanted);
  if (byId) return byId;
  const named: DeviceConfigNode[] = [];
  RED.nodes.eachNode?.((def) => {
    if (def.type !== 'ipcam-device' || typeof def.name !== 'string' || def.name.trim() !== wanted) return;
    const device = visibleDevice(RED, user, def.id);
    if (device) named.push(device);
  });
  if (named.length === 1) return named[0] as DeviceConfigNode;
  if (named.length > 1) {
    const ids = named.slice(0, IDS_LISTED).map((d) => d.id);
    throw inputError(`msg.device ${echo(wanted)} is ambiguous: ${named.length} ipcam-device nodes have that name (${ids.join(', ')}${named.length > IDS_LISTED ? ', ...' : ''}); name one by its id`);
  }
  throw inputError(`No deployed ipcam-device is named ${echo(wanted)} or has that id (${USAGE})`);
}

/**
 * Text that reads as a URL or carries user info: not echoed (it may hold a password) and never
 * taken for a name.
 */
function looksLikeAddress(text: string): boolean {
  return text.includes('://') || text.includes('@');
}

/** The running ipcam-device of that id, when the user node may name it and it is not closing. */
function visibleDevice(RED: NodeAPI, user: Pick<Node, 'z'>, id: string): DeviceConfigNode | undefined {
  const node = RED.nodes.getNode(id);
  if (typeof node !== 'object' || node === null) return undefined;
  const device = node as Partial<DeviceConfigNode>;
  if (device.type !== 'ipcam-device' || typeof device.getClient !== 'function' || typeof device.registerUser !== 'function') return undefined;
  // A device node scoped to one flow (z set) is not offered to other flows' nodes.
  if (device.z && device.z !== user.z) return undefined;
  if (typeof device.isClosing === 'function' && device.isClosing()) return undefined;
  return device as DeviceConfigNode;
}
