import { oneLine } from '../lib/echo';
import { IpcamError } from '../lib/errors';
import type { DeviceClient } from '../lib/transport/client';
import type { DeviceConfigNode } from './device-config';
import type { DoneFn, Node, NodeAPI, NodeMessage, NodeStatus } from './red';

/**
 * The input handling every action node shares: resolve the device, run the operation, map the
 * outcome to msg, status and a Catch-able error. In-flight requests are aborted on close.
 */
export function handleInput(
  RED: NodeAPI,
  node: Node,
  deviceId: string | undefined,
  run: (msg: NodeMessage, client: DeviceClient, signal: AbortSignal) => Promise<NodeStatus>,
): void {
  const inFlight = new Map<AbortController, Promise<void>>();
  let closing = false;
  const device = optionalDevice(RED, deviceId);
  const release = device?.registerUser(node.id);

  node.on('input', (msg, send, done) => {
    const controller = new AbortController();
    const running = (async () => {
      try {
        const client = deviceOf(RED, deviceId).getClient();
        node.status({ fill: 'yellow', shape: 'ring', text: 'requesting' });
        const status = await run(msg, client, controller.signal);
        node.status(status);
        send(msg);
        done();
      } catch (err) {
        if (closing) return done();
        reportFailure(node, msg, err, done);
      }
    })();
    inFlight.set(controller, running);
    void running.finally(() => inFlight.delete(controller));
  });

  node.on('close', (_removed, done) => {
    closing = true;
    for (const controller of inFlight.keys()) controller.abort();
    // The device closes its client once these aborted requests have settled.
    release?.(Promise.allSettled(inFlight.values()));
    inFlight.clear();
    node.status({});
    done();
  });
}

/** A failed input: `msg.error`, a red status and `done(err)` so that a Catch node gets it. */
export function reportFailure(node: Node, msg: NodeMessage, err: unknown, done: DoneFn): void {
  // Not ours (a bug, a library's own error): its class is told, not its message, which is foreign text.
  const error = err instanceof IpcamError ? err : new IpcamError('EPARSE', `Unexpected failure (${oneLine(err instanceof Error ? err.name : typeof err, 40)})`);
  msg['error'] = error.toJSON();
  node.status({ fill: 'red', shape: 'ring', text: shortReason(error) });
  done(error);
}

/** The node's ipcam-device; EINPUT when the setting names none. */
export function deviceOf(RED: NodeAPI, id: string | undefined): DeviceConfigNode {
  const device = optionalDevice(RED, id);
  if (!device) throw new IpcamError('EINPUT', 'No device configured: choose an ipcam-device in the node settings');
  return device;
}

function optionalDevice(RED: NodeAPI, id: string | undefined): DeviceConfigNode | undefined {
  const device = id ? (RED.nodes.getNode(id) as DeviceConfigNode | null) : null;
  return device && typeof device.getClient === 'function' ? device : undefined;
}

/** Status texts stay under 20 characters. */
export function shortReason(err: IpcamError): string {
  switch (err.code) {
    case 'EINPUT':
      return 'invalid input';
    case 'EAUTH':
      return 'auth failed';
    case 'ETIMEOUT':
      return 'timeout';
    case 'ECONN':
      return 'unreachable';
    case 'EHTTP':
      return `HTTP ${err.status ?? 'error'}`;
    case 'EDEVICE':
      return `device error ${err.deviceCode ?? ''}`.trim();
    case 'EPARSE':
      return 'bad answer';
  }
}

/**
 * A plain object payload (overrides of the settings) as a copy without null or undefined fields,
 * so that `{ group: null }` falls back to the setting; undefined for anything else.
 */
export function payloadObject(msg: NodeMessage): Record<string, unknown> | undefined {
  const p = msg.payload;
  if (typeof p !== 'object' || p === null || Array.isArray(p) || Buffer.isBuffer(p)) return undefined;
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined && v !== null));
}
