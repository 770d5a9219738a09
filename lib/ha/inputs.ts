/**
 * The digital inputs a camera shows Home Assistant: the input monitor stream, supervised (reconnect,
 * backoff, the device's health), with a `check` read on every (re)connect so that a change made
 * while the stream was down is reported too: no edge is lost (see IoEdgeTracker).
 */
import type { IpcamError } from '../errors/errors';
import type { DeviceHealth } from '../health/device-health';
import { IoEdgeTracker, checkIo, ioMonitorPath, parseIoLines, type IoReport } from '../ops/io';
import { StreamSupervisor, type BackoffOptions, type StreamState } from '../stream/supervisor';
import type { DeviceClient } from '../transport/client';

export interface InputWatchOptions {
  client: DeviceClient;
  ports: readonly number[];
  /** Each state of a port, in order: an edge the stream missed comes first, as a change of its own. */
  onInput(port: number, active: boolean): void;
  onError(error: IpcamError): void;
  onWarning(text: string): void;
  onState?(state: StreamState): void;
  /** When the device has a heartbeat: the stream waits for it while the device is offline. */
  health?: DeviceHealth;
  backoff?: BackoffOptions;
}

export class InputWatch {
  private readonly tracker = new IoEdgeTracker();
  private readonly supervisor: StreamSupervisor;
  private reading: AbortController | undefined;

  constructor(private readonly opts: InputWatchOptions) {
    this.supervisor = new StreamSupervisor({
      client: opts.client,
      path: ioMonitorPath('input', [...opts.ports]),
      onPart: (part) => this.emit(this.tracker.fromStream(parseIoLines(part.body.toString('latin1')))),
      onState: (state) => {
        // A read of an older connection is no use: the next connect reads again.
        this.reading?.abort();
        if (state === 'connected') this.resync();
        opts.onState?.(state);
      },
      onWarning: opts.onWarning,
      onError: opts.onError,
      ...(opts.backoff !== undefined && { backoff: opts.backoff }),
      ...(opts.health !== undefined && { device: opts.health }),
    });
  }

  start(): void {
    this.supervisor.start();
  }

  stop(): Promise<void> {
    this.reading?.abort();
    return this.supervisor.stop();
  }

  private emit(reports: IoReport[]): void {
    for (const { state } of reports) if (this.opts.ports.includes(state.port)) this.opts.onInput(state.port, state.active);
  }

  private resync(): void {
    const controller = new AbortController();
    this.reading = controller;
    const signal = controller.signal;
    this.tracker.resync(() => checkIo(this.opts.client, 'input', [...this.opts.ports], signal), signal).then(
      (reports) => this.emit(reports),
      // A failed read is the device's health's news; the stream's own failures are reported by the supervisor.
      () => undefined,
    );
  }
}
