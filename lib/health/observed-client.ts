import { IpcamError } from '../errors';
import { DeviceClient, type DeviceResponse, type DeviceStream, type RequestOptions, type StreamOptions } from '../transport/client';
import type { DeviceOptions } from '../transport/options';
import type { DeviceHealth } from './device-health';
import type { SelfReporting } from './heartbeat';

/**
 * A device's client that tells its health the outcome of every exchange: each request and each
 * stream opening of every node that uses the device passes here. What the caller aborted (a
 * stop, a close) teaches nothing and is not told; the heartbeat's requests (their signals are in
 * `selfReported`) are told by the heartbeat once it has read the whole answer.
 */
export class ObservedClient extends DeviceClient implements SelfReporting {
  readonly selfReported = new WeakSet<AbortSignal>();
  private closing = false;

  constructor(
    options: DeviceOptions,
    readonly health: DeviceHealth,
  ) {
    super(options);
  }

  override async request(opts: RequestOptions): Promise<DeviceResponse> {
    try {
      const response = await super.request(opts);
      if (this.observed(opts.signal)) this.health.succeeded();
      return response;
    } catch (err) {
      this.failed(err, opts.signal);
      throw err;
    }
  }

  override async openStream(opts: StreamOptions): Promise<DeviceStream> {
    try {
      const stream = await super.openStream(opts);
      if (this.observed(opts.signal)) this.health.succeeded();
      return stream;
    } catch (err) {
      this.failed(err, opts.signal);
      throw err;
    }
  }

  override async close(): Promise<void> {
    this.closing = true;
    await super.close();
  }

  private observed(signal: AbortSignal | undefined): boolean {
    return signal === undefined || !this.selfReported.has(signal);
  }

  private failed(err: unknown, signal: AbortSignal | undefined): void {
    // A request refused because the client closed (a redeploy) says nothing of the device either.
    if (signal?.aborted || this.closing || !(err instanceof IpcamError) || !this.observed(signal)) return;
    this.health.failed(err);
  }
}
