import { listParams } from '../ops/param-calls';
import { getDeviceInfo, identifyDevice, type DeviceIdentity } from '../ops/device-info';
import { IpcamError } from '../errors/errors';
import type { DeviceClient } from '../transport/client';
import type { DeviceHealth, HealthInfo } from './device-health';
import { RETRY_PROBE_MS } from './heartbeat-setting';

let openHeartbeats = 0;
const UNREPORTED = Object.freeze({ report: false });

export interface HeartbeatOptions {
  /** The device's client, `health` its hooks: the probes are sent `report: false` and told by the heartbeat itself. */
  client: DeviceClient;
  health: DeviceHealth;
  /** ms between reads while the device is online (0 = no heartbeat). */
  interval: number;
}

/**
 * The optional heartbeat of one device: the cheapest read its interface offers, one at a time,
 * never overlapping. While online, a beat is skipped when the users' own exchanges are recent
 * enough; after a first failure the next beat comes soon (RETRY_PROBE_MS) to confirm it; while
 * offline it keeps probing at that pace; after a refused password it stops asking (accounts lock)
 * until an exchange of a user gets an answer again. The identity (model, firmware, MAC) is read
 * on the first beat and once after each return online. Its one timer is unref'd and released
 * by close().
 */
export class Heartbeat {
  /** Heartbeats made and not closed, in this process: a redeploy must leave as many as before. */
  static get open(): number {
    return openHeartbeats;
  }

  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (ms since the epoch). */
  private due = 0;
  private inFlight: AbortController | undefined;
  private closed = false;
  private identity: DeviceIdentity['interface'] | undefined;
  private needIdentity = true;
  private readonly unsubscribe: () => void;

  constructor(private readonly opts: HeartbeatOptions) {
    openHeartbeats += 1;
    this.unsubscribe = opts.health.subscribe((change) => {
      // Back from a time away, the device may be another one (replaced, upgraded): read it again.
      if (change.state !== 'online') this.needIdentity = true;
      // A beat's own change: the beat schedules the next when it ends.
      if (this.inFlight || this.closed) return;
      const delay = this.nextDelay();
      if (delay < 0) return this.stop();
      // Sooner when a user's exchange found the device down; back from auth-failed, asking again.
      if (!this.timer || Date.now() + delay < this.due) this.schedule(delay);
    });
  }

  get enabled(): boolean {
    return this.opts.interval > 0;
  }

  start(): void {
    if (this.enabled) this.schedule(this.opts.interval);
  }

  /**
   * Someone wants the device's state and identity now (a device-status node): a first beat at
   * once, unless the identity is known or a beat is under way.
   */
  wanted(): void {
    if (!this.enabled || this.closed || this.inFlight || !this.needIdentity || this.opts.health.state === 'auth-failed') return;
    this.schedule(0);
  }

  close(): void {
    if (!this.closed) openHeartbeats -= 1;
    this.closed = true;
    this.unsubscribe();
    this.stop();
    this.inFlight?.abort();
    this.inFlight = undefined;
  }

  private schedule(delay: number): void {
    if (this.closed || !this.enabled || delay < 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.due = Date.now() + delay;
    this.timer = setTimeout(() => void this.beat(), delay);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** ms to the next beat; -1 = none (refused password: no asking until an answer comes). */
  private nextDelay(): number {
    const { health } = this.opts;
    if (health.state === 'auth-failed') return -1;
    if (health.state === 'offline' || health.failuresInARow > 0) return Math.min(this.opts.interval, RETRY_PROBE_MS);
    return this.opts.interval;
  }

  private async beat(): Promise<void> {
    this.timer = undefined;
    const { health } = this.opts;
    if (this.closed || this.inFlight || health.state === 'auth-failed') return;
    if (health.state === 'online' && health.failuresInARow === 0 && !this.needIdentity) {
      // The users' exchanges already tell: a beat would teach nothing.
      const age = Date.now() - health.lastOutcome;
      if (age < this.opts.interval) return this.schedule(this.opts.interval - age);
    }
    const controller = new AbortController();
    this.inFlight = controller;
    try {
      const info = await this.read(controller.signal);
      if (controller.signal.aborted) return;
      // The identity first, so that the change to online already carries it.
      if (info) health.info = info;
      health.succeeded();
    } catch (err) {
      if (controller.signal.aborted) return;
      health.failed(err instanceof IpcamError ? err : new IpcamError('ECONN', 'The heartbeat failed'));
    } finally {
      if (this.inFlight === controller) this.inFlight = undefined;
    }
    if (!this.closed && !this.timer) this.schedule(this.nextDelay());
  }

  /**
   * The identity when it is wanted, else the cheapest read of the device's interface. Its
   * requests are not reported by the client: `beat` tells the health once the whole answer is read.
   */
  private async read(signal: AbortSignal): Promise<HealthInfo | undefined> {
    const { client } = this.opts;
    if (this.needIdentity || !this.identity) {
      const identity = await identifyDevice(client, signal, UNREPORTED);
      this.identity = identity.interface;
      this.needIdentity = false;
      return infoOf(identity);
    }
    if (this.identity === 'xml') await getDeviceInfo(client, signal, UNREPORTED);
    else await listParams(client, ['Brand'], { level: 'admin', signal, ...UNREPORTED });
    return undefined;
  }
}

function infoOf(identity: DeviceIdentity): HealthInfo {
  const info: HealthInfo = {};
  if (identity.model !== undefined) info.model = own(identity.model);
  if (identity.firmware !== undefined) info.firmware = own(identity.firmware);
  if (identity.mac !== undefined) info.mac = own(identity.mac);
  return info;
}

/**
 * A copy of its own of a text cut from an answer: V8 keeps a cut (a "sliced string") as a view
 * of the whole answer, and the identity is kept for the device's lifetime (about 900 bytes of
 * answer per device, measured with bench/device-heap.ts, for a few bytes of model name).
 */
function own(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
