import { IpcamError } from '../lib/errors';
import { unknownWord } from '../lib/suggest';
import type { MultipartPart } from '../lib/cgi/multipart';
import { StreamSupervisor, type StreamState, type StreamStateInfo } from '../lib/stream/supervisor';
import type { DeviceClient } from '../lib/transport/client';
import { failureLine, failureStatus } from '../lib/refusal';
import { FailureLine, deviceOf, reportFailure } from './action';
import type { DeviceConfigNode } from './device-config';
import type { Node, NodeAPI, NodeMessage, NodeStatus, SendFn } from './red';

export interface StreamNodeControl {
  start(): void;
  stop(): Promise<void>;
  /** The last event, for the status text (under 20 characters). */
  showEvent(text: string): void;
}

/** Longest wait between two attempts of a stream (ms): a device that comes back streams again within it. */
export const RECONNECT_MAX_MS = 8000;

/** A command a stream node takes besides 'start' and 'stop' (e.g. 'check'). */
export type ExtraCommands = Record<string, (msg: NodeMessage, send: SendFn) => Promise<void>>;

/**
 * The inputs of a stream node: 'start', 'stop' and its own commands; anything else is EINPUT,
 * reported like any failed input.
 */
export function handleCommands(node: Node, control: StreamNodeControl, extra: ExtraCommands = {}): void {
  const words = ['start', 'stop', ...Object.keys(extra)];
  const known = words.map((c) => `'${c}'`).join(', ');
  node.on('input', (msg, send, done) => {
    const command = typeof msg.payload === 'string' ? msg.payload.trim().toLowerCase() : '';
    if (command === 'start') return void (control.start(), done());
    if (command === 'stop') return void control.stop().then(() => done());
    const run = Object.hasOwn(extra, command) ? extra[command] : undefined;
    if (!run) return reportFailure(node, msg, unknownWord('command', msg.payload, words, `send ${known}`), done);
    run(msg, send).then(
      () => done(),
      (err: unknown) => reportFailure(node, msg, err, done),
    );
  });
}

/** What a stream node adds to the shared stream handling. */
export interface StreamNodeOptions {
  /** See SupervisorOptions.stallTimeout: only for streams that send periodic data. */
  stallTimeout?: number;
  /** Every state change of the stream, after the status shows it. */
  onState?(state: StreamState): void;
}

/**
 * The connection side every stream node shares: a supervised stream per node, its state in the
 * status, each kind of failure once to `node.error` (a Catch node gets it), `start`/`stop`, and
 * release of everything on close. Returns undefined (with a red status and an error) when the
 * device setting is unusable.
 */
export function superviseStream(
  RED: NodeAPI,
  node: Node,
  deviceId: string | undefined,
  path: (client: DeviceClient) => string,
  onPart: (part: MultipartPart) => void,
  options: StreamNodeOptions = {},
): StreamNodeControl | undefined {
  let client: DeviceClient;
  let target: string;
  let device: DeviceConfigNode;
  try {
    device = deviceOf(RED, deviceId);
    client = device.getClient();
    target = path(client);
  } catch (err) {
    const error = err instanceof IpcamError ? err : new IpcamError('EINPUT', String(err));
    node.status({ fill: 'red', shape: 'ring', text: failureStatus(error) });
    node.error(new FailureLine(failureLine(error), error.code));
    return undefined;
  }
  const supervisor = new StreamSupervisor({
    client,
    path: target,
    onPart,
    onState: (state, info) => {
      node.status(stateStatus(state, info));
      options.onState?.(state);
    },
    onWarning: (text) => node.warn(text),
    onError: (error, state) => reportStreamFailure(node, error, { state }),
    ...(options.stallTimeout !== undefined && { stallTimeout: options.stallTimeout }),
    // A device that comes back is streaming again within RECONNECT_MAX_MS (plus the connect) even
    // without a heartbeat; with one, streams wait on the heartbeat's probe while the device is offline.
    backoff: { max: RECONNECT_MAX_MS },
    ...(device.heartbeat > 0 && { device: device.health }),
  });
  const release = device.registerUser(node.id);
  node.on('close', (_removed, done) => {
    const stopped = supervisor.stop();
    release(stopped);
    void stopped.finally(() => {
      node.status({});
      done();
    });
  });
  return {
    start: () => supervisor.start(),
    stop: () => supervisor.stop(),
    showEvent: (text) => node.status({ fill: 'green', shape: 'dot', text: text.slice(0, 19) }),
  };
}

/**
 * A failure of the stream itself (no input message caused it) as an error a Catch node gets:
 * `msg.error` holds the code, `msg.payload` what the node was doing.
 */
export function reportStreamFailure(node: Node, error: IpcamError, payload: Record<string, unknown>): void {
  node.error(error, { payload, error: error.toJSON() });
}

function stateStatus(state: StreamState, info: StreamStateInfo): NodeStatus {
  switch (state) {
    case 'connecting':
      return { fill: 'yellow', shape: 'ring', text: info.attempt ? `connecting (${info.attempt})` : 'connecting' };
    case 'connected':
      return { fill: 'green', shape: 'dot', text: 'connected' };
    case 'retrying':
      // When the next try is, rather than a wait that would need a timer per node to count down.
      return { fill: 'yellow', shape: 'ring', text: `retry ${info.attempt ?? ''} at ${clockOf(info.at ?? Date.now())}` };
    case 'waiting':
      return { fill: 'yellow', shape: 'ring', text: 'device not answering' };
    case 'auth-failed':
      return { fill: 'red', shape: 'ring', text: `auth failed, ${Math.round((info.delay ?? 0) / 60000)} min` };
    case 'unsupported':
      return { fill: 'red', shape: 'ring', text: 'not supported' };
    case 'stopped':
      return { fill: 'grey', shape: 'ring', text: 'stopped' };
  }
}

/** HH:MM:SS of now, for status texts. */
export function clockNow(): string {
  return clockOf(Date.now());
}

/** HH:MM:SS (local time) of a moment, for status texts. */
function clockOf(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8);
}
