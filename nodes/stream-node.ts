import { IpcamError } from '../lib/errors/errors';
import { unknownWord } from '../lib/input/suggest';
import type { MultipartPart } from '../lib/cgi/multipart';
import { StreamSupervisor, type StreamState } from '../lib/stream/supervisor';
import type { DeviceClient } from '../lib/transport/client';
import { failureLine } from '../lib/errors/refusal';
import { cleared, streamState, type Status } from '../lib/status/status';
import { FailureLine, deviceOf, refuseEveryInput, reportFailure } from './action';
import type { DeviceConfigNode } from './device-config';
import type { Node, NodeAPI, NodeMessage, SendFn } from './red';

export interface StreamNodeControl {
  start(): void;
  stop(): Promise<void>;
  /** The last event, as the status shows it (a word of lib/status). */
  showEvent(status: Status): void;
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
    refuseStream(node, err instanceof IpcamError ? err : new IpcamError('EINPUT', String(err)));
    return undefined;
  }
  const supervisor = new StreamSupervisor({
    client,
    path: target,
    onPart,
    onState: (state, info) => {
      node.status(streamState(state, info));
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
      node.status(cleared());
      done();
    });
  });
  return {
    start: () => supervisor.start(),
    stop: () => supervisor.stop(),
    showEvent: (status) => node.status(status),
  };
}

/**
 * A stream node that cannot start with its settings (DESIGN: checked on deploy): a red status, the
 * refusal once to `node.error` (no message caused it: a Catch node learns the stream never
 * opened), and every message then gets that same EINPUT.
 */
export function refuseStream(node: Node, error: IpcamError): void {
  refuseEveryInput(node, error);
  node.error(new FailureLine(failureLine(error), error.code));
}

/**
 * A failure of the stream itself (no input message caused it) as an error a Catch node gets:
 * `msg.error` holds the code, `msg.payload` what the node was doing.
 */
export function reportStreamFailure(node: Node, error: IpcamError, payload: Record<string, unknown>): void {
  node.error(error, { payload, error: error.toJSON() });
}
