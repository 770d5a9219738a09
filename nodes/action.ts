import { setMaxListeners } from 'node:events';
import { oneLine } from '../lib/errors/echo';
import { IpcamError } from '../lib/errors/errors';
import { withoutSecretParams } from '../lib/ops';
import { checkPayloadKeys } from '../lib/input/payload';
import { parseSettings } from '../lib/settings';
import type { ActionSpec, NodeSpec, SettingRules, StoredSettings } from '../lib/node-spec';
import { failureLine, failureMessage, type DeviceLabel } from '../lib/errors/refusal';
import { cleared, deviceState, failed, progress, requesting, type Status } from '../lib/status/status';
import type { DeviceClient } from '../lib/transport/client';
import type { DeviceConfigNode } from './device-config';
import { deviceNamed } from './device-lookup';
import type { DoneFn, Node, NodeAPI, NodeDef, NodeMessage } from './red';

/** The device an input addresses: the node's own (its setting), or one `msg.device` named. */
export interface DeviceTarget {
  device: DeviceConfigNode;
  /** True when reached through `msg.device` (another device than the setting's). */
  borrowed: boolean;
}

/** How the input handling runs one message: the device's client, the node's abort, the device reached. */
type MessageRun = (msg: NodeMessage, client: DeviceClient, signal: AbortSignal, target: DeviceTarget) => Promise<Status>;

/**
 * Registers the action node of `spec` (nodes/<type>/spec.ts): its folder's runtime is this call
 * alone. Each deploy creates the node and starts it (startAction).
 */
export function registerActionNode<S extends SettingRules, P, I, R, K>(RED: NodeAPI, spec: ActionSpec<S, P, I, R, K>): void {
  function ActionNode(this: Node, def: NodeDef & StoredSettings): void {
    RED.nodes.createNode(this, def);
    startAction(RED, this, spec, def);
  }
  RED.nodes.registerType(spec.type, ActionNode as (this: never, def: never) => void);
}

/**
 * Runs an action node by its spec: the settings are parsed on deploy (one out of its rules, or
 * refused by the spec's `deploy`, is a red status, and every message gets that EINPUT with nothing
 * sent), then each message goes through handleInput (payload keys, device) into one mapped run:
 * input from payload and settings, the operation(s), the result as the message. `parsed` is given
 * by a node that leaves a setting of another mode out (the detection stream's single mode).
 */
export function startAction<S extends SettingRules, P, I, R, K>(
  RED: NodeAPI,
  node: Node,
  spec: ActionSpec<S, P, I, R, K>,
  stored: NodeDef & StoredSettings,
  parsed: ReturnType<typeof parseSettings<S>> = parseSettings(spec.settings, stored),
): void {
  let plan: P;
  try {
    if (parsed.refused) throw parsed.refused;
    plan = spec.deploy(parsed.settings, stored);
  } catch (err) {
    if (err instanceof IpcamError) return refuseEveryInput(node, err);
    throw err;
  }
  const keeper = spec.keep;
  // A spec without `keep` has K undefined (defineAction's default): nothing is kept.
  const kept = keeper?.open(plan, (text) => node.warn(text)) as K;
  let holds = 0;
  // `none`: the payload is set aside unread (its value is the parsed Overrides setting).
  const payloadAside = (parsed.settings as Readonly<Record<string, unknown>>)['overrides'] === 'none';
  const showProgress = (stage: string, percent: number): void => node.status(progress(stage, percent));
  // The node's own device is held by the node for its lifetime: nothing to add per message.
  const ownHold = (): ((settled: Promise<unknown>) => void) => () => undefined;
  handleInput(RED, node, spec, typeof stored['device'] === 'string' ? stored['device'] : undefined, payloadAside, async (msg, client, signal, target) => {
    const input = spec.input(msg.payload, plan);
    const hold = target.borrowed ? () => target.device.registerUser(`${node.id}#hold#${(holds = (holds + 1) % Number.MAX_SAFE_INTEGER)}`) : ownHold;
    const result = await spec.run(client, input, { signal, borrowed: target.borrowed, hold, progress: showProgress, kept });
    const out = spec.output(result, input, plan);
    msg.payload = out.payload;
    if (out.fields) Object.assign(msg, out.fields);
    if (out.warning !== undefined) node.warn(out.warning);
    return out.status;
  });
  if (keeper) node.on('close', (_removed: boolean, done: () => void) => void keeper.close(kept).finally(done));
}

/**
 * The input handling every action node shares: resolve the device (the setting, or the one
 * `msg.device` names), run the operation, map the outcome to msg, status and a Catch-able error.
 * In-flight requests are aborted on close. `spec` (the node folder's spec.ts) gives the keys its
 * payload may hold; `payloadAside` (Overrides `none`) sets every payload aside unread.
 *
 * Registration (see device-users.ts): the node is a user of its own device for its lifetime; a
 * device reached through `msg.device` has the node as a user for the duration of that request,
 * so a redeploy never closes that client under it.
 */
function handleInput(RED: NodeAPI, node: Node, spec: NodeSpec, deviceId: string | undefined, payloadAside: boolean, run: MessageRun): void {
  const inFlight = new Set<Promise<void>>();
  let closing = false;
  let requests = 0;
  // One abort for every request of the node (they all end with it): an AbortController per
  // input cost a gate's relay a tenth of its CPU. Made by the first input.
  let aborter: AbortController | undefined;
  showChangesOnly(node);
  const requesting = new RequestingStatus(node, () => inFlight.size > 0 && !closing);
  const device = optionalDevice(RED, deviceId);
  const release = device?.registerUser(node.id);
  // Idle, the node shows its device's state as it changes; a request shows its own result.
  const stopWatching = device?.health.subscribe((change) => {
    if (inFlight.size === 0 && !closing) node.status(deviceState(change.state));
  });
  // Redeployed alone, beside a device that kept running: what is known of it already.
  if (device && device.health.state !== 'unknown') node.status(deviceState(device.health.state));

  node.on('input', (msg, send, done) => {
    aborter ??= unboundedAbort();
    const signal = aborter.signal;
    const running = (async () => {
      let releaseBorrowed: ((settled: Promise<unknown>) => void) | undefined;
      let device: DeviceConfigNode | undefined;
      // Set aside: the payload is not read, and is given back to a failed message.
      const held = msg.payload;
      try {
        if (payloadAside) msg.payload = undefined;
        else checkPayloadKeys(spec, msg.payload);
        const target = targetOf(RED, node, deviceId, msg);
        device = target.device;
        // One registration per request: two requests to one device release separately.
        if (target.borrowed) releaseBorrowed = target.device.registerUser(`${node.id}#msg.device#${(requests = (requests + 1) % Number.MAX_SAFE_INTEGER)}`);
        const client = target.device.getClient();
        requesting.started();
        const status = await run(msg, client, signal, target);
        node.status(status);
        send(msg);
        done();
      } catch (err) {
        if (payloadAside) msg.payload = held;
        if (closing) return done();
        reportFailure(node, msg, err, done, device);
      } finally {
        // The request has settled: nothing of it is left on that client.
        releaseBorrowed?.(Promise.resolve());
      }
    })();
    inFlight.add(running);
    void running.finally(() => {
      inFlight.delete(running);
      if (inFlight.size === 0) requesting.clear();
    });
  });

  node.on('close', (_removed, done) => {
    closing = true;
    stopWatching?.();
    requesting.clear();
    aborter?.abort();
    // The device closes its client once these aborted requests have settled; a device reached
    // through msg.device is released by each request as it settles.
    release?.(Promise.allSettled(inFlight));
    inFlight.clear();
    node.status(cleared());
    done();
  });
}

/**
 * A node whose settings were refused on deploy (DESIGN: settings are checked on deploy): the red
 * status stays, and each message gets that same EINPUT, with nothing sent. startAction refuses so
 * for the action nodes; the stream nodes and discover, which take their inputs otherwise, too.
 */
export function refuseEveryInput(node: Node, refused: IpcamError): void {
  node.status(failed(refused));
  node.on('input', (msg, _send, done) => reportFailure(node, msg, refused, done));
  node.on('close', (_removed, done) => {
    node.status(cleared());
    done();
  });
}

/**
 * An abort shared by any number of requests at once: each in-flight request listens on it, so
 * the warning for more than ten listeners would only name a busy node.
 */
function unboundedAbort(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** How long a request runs before the node says it is requesting: a fast one shows only its result. */
export const REQUESTING_AFTER_MS = 250;

/**
 * The yellow "requesting" of a node whose request takes long enough to be seen (an upload, a
 * plate sync, a device that is slow to answer); a relay answered in milliseconds goes straight
 * to its result instead of flickering through yellow twice per message. One timer per node:
 * armed when a request starts with none in flight, cleared when none is left, so that requests
 * answered in milliseconds never wake the process for it (a timer left to fire after each quiet
 * spell cost a gate at 10 plates a second a wakeup every 250 ms).
 */
class RequestingStatus {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly node: Node,
    private readonly busy: () => boolean,
  ) {}

  started(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.busy()) this.node.status(requesting());
    }, REQUESTING_AFTER_MS);
  }

  /** No request is in flight any more, or the node closes. */
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * Sets the node's status only when it changes what the node shows: each status goes through
 * Node-RED's status handling (Status nodes, every open editor), and a gate's relay shows
 * "relay 1 pulsed" after every plate. Covers every status of the node, progress included.
 */
function showChangesOnly(node: Node): void {
  const set = node.status.bind(node);
  let shown: string | undefined;
  node.status = (status) => {
    const key = `${status.fill ?? ''}|${status.shape ?? ''}|${status.text ?? ''}`;
    if (key === shown) return;
    shown = key;
    set(status);
  };
}

/**
 * The device of one input: `msg.device` when the message has one (any value but undefined is
 * checked: null, an object or an empty text is EINPUT, never the setting), else the setting.
 */
function targetOf(RED: NodeAPI, node: Node, deviceId: string | undefined, msg: NodeMessage): DeviceTarget {
  if (msg['device'] === undefined) {
    const own = optionalDevice(RED, deviceId);
    if (!own) throw new IpcamError('EINPUT', 'No device: choose an ipcam-device in the node settings or name one in msg.device');
    return { device: own, borrowed: false };
  }
  const device = deviceNamed(RED, node, msg['device']);
  return { device, borrowed: device.id !== deviceId };
}

/**
 * The text `node.error` is given: one line (code and reason) that the Debug sidebar shows as
 * text, not as a collapsed Error object, and that carries the code as its own property, which
 * Node-RED copies into the `msg.error.code` a Catch node reads. Named `string` so that the
 * sidebar labels it as the text it is (it names the type by the constructor).
 */
export class FailureLine extends String {
  declare readonly code: string;
  constructor(text: string, code: string) {
    super(text);
    Object.defineProperty(this, 'code', { value: code, enumerable: false });
  }
}
Object.defineProperty(FailureLine, 'name', { value: 'string' });

/**
 * A failed input: `msg.error`, a red status (`EINPUT: key 'stat'`, `EAUTH: Front gate cam`) and
 * `node.error(line, msg)` so that a Catch node gets it and the Debug sidebar shows one line. A
 * device's error names `device` (name and host). The message goes on without the secret
 * parameters its payload carried (a new password, a test server's password): a Catch node often
 * logs or forwards what it gets.
 */
export function reportFailure(node: Node, msg: NodeMessage, err: unknown, done: DoneFn, device?: DeviceLabel): void {
  // Not ours (a bug, a library's own error): its class is told, not its message, which is foreign text.
  const error = err instanceof IpcamError ? err : new IpcamError('EPARSE', `Unexpected failure (${oneLine(err instanceof Error ? err.name : typeof err, 40)})`);
  msg['error'] = { ...error.toJSON(), message: failureMessage(error, device) };
  msg.payload = withoutSecretParams(msg.payload);
  node.status(failed(error, device));
  node.error(new FailureLine(failureLine(error, device), error.code), msg);
  done();
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
