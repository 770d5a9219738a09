import type { IpcamError } from '../errors/errors';
import type { ClientHooks, ExchangeOutcome } from '../transport/client';

/** What is known of a device's reachability, from its users' exchanges and its heartbeat. */
export type HealthState = 'online' | 'offline' | 'auth-failed' | 'unknown';

/** Who the device said it is, from its identity answer (cached; refreshed when it comes online). */
export interface HealthInfo {
  model?: string;
  firmware?: string;
  mac?: string;
}

export interface HealthChange {
  state: HealthState;
  previous: HealthState;
  /** When the device entered `state`. */
  since: Date;
  /** Why, for offline and auth-failed: the failure's own text (our words, never a secret). */
  reason?: string;
}

/**
 * What an exchange tells of the device: `answered` (any HTTP answer, errors included: the device
 * is there), `unreachable` (no connection or no answer in time), `refused` (the credentials were
 * refused), or `none` (nothing was learnt: the request was never sent, or was aborted by us).
 */
export type Outcome = 'answered' | 'unreachable' | 'refused' | 'none';

/**
 * The outcome of an exchange that failed with `err`. A 5xx is an answer: the device is up, if
 * unwell; EPARSE and EDEVICE are answers too. EINPUT was never sent.
 */
export function outcomeOf(err: IpcamError): Outcome {
  switch (err.code) {
    case 'EAUTH':
      return 'refused';
    case 'ECONN':
    case 'ETIMEOUT':
      return 'unreachable';
    case 'EINPUT':
      return 'none';
    case 'EHTTP':
    case 'EDEVICE':
    case 'EPARSE':
      return 'answered';
  }
}

/**
 * Failures in a row before a device that was reachable is `offline`: one lost packet is no
 * outage. A device never reached (`unknown`) takes the same two.
 */
export const FAILURES_BEFORE_OFFLINE = 2;

export type HealthListener = (change: HealthChange) => void;

/**
 * The health state machine of one device: fed by outcomes, it changes state and tells its
 * listeners once per change. `online` on any answer; `auth-failed` at once on a refused
 * password; `offline` after FAILURES_BEFORE_OFFLINE unreachable outcomes in a row. It is the
 * hooks of the device's client (`new DeviceClient(options, health)`): every exchange of every
 * node that uses the device feeds it; the heartbeat feeds its own probes (`report: false`).
 */
export class DeviceHealth implements ClientHooks {
  private current: HealthState = 'unknown';
  private previousState: HealthState = 'unknown';
  private changedAt: Date;
  private lastReason: string | undefined;
  private failures = 0;
  private lastOutcomeAt = 0;
  private readonly listeners = new Set<HealthListener>();
  /** Identity of the device, when a heartbeat has read it. */
  info: HealthInfo | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.changedAt = new Date(now());
  }

  get state(): HealthState {
    return this.current;
  }

  /** The present state as a change record: what a `check` answers. */
  get snapshot(): HealthChange {
    return { state: this.current, previous: this.previousState, since: this.changedAt, ...(this.lastReason !== undefined && { reason: this.lastReason }) };
  }

  /** Unreachable outcomes since the last answer. */
  get failuresInARow(): number {
    return this.failures;
  }

  /** When the last outcome that taught something came (ms since the epoch, 0 = never). */
  get lastOutcome(): number {
    return this.lastOutcomeAt;
  }

  /** Adds a listener; the returned function removes it. */
  subscribe(listener: HealthListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  onOutcome(outcome: ExchangeOutcome): void {
    if (outcome.ok) this.succeeded();
    else this.failed(outcome.error);
  }

  /** An exchange succeeded (the device answered). */
  succeeded(): void {
    this.record('answered');
  }

  /** An exchange failed: what it tells of the device. */
  failed(err: IpcamError): void {
    this.record(outcomeOf(err), err.message);
  }

  record(outcome: Outcome, reason?: string): void {
    if (outcome === 'none') return;
    this.lastOutcomeAt = this.now();
    if (outcome === 'answered') {
      this.failures = 0;
      this.enter('online', undefined);
    } else if (outcome === 'refused') {
      this.failures = 0;
      this.enter('auth-failed', reason);
    } else {
      this.failures = Math.min(this.failures + 1, FAILURES_BEFORE_OFFLINE);
      if (this.failures >= FAILURES_BEFORE_OFFLINE) this.enter('offline', reason);
    }
  }

  /** Drops every listener (the device node closes). */
  close(): void {
    this.listeners.clear();
  }

  private enter(state: HealthState, reason: string | undefined): void {
    if (state === this.current) return;
    this.previousState = this.current;
    this.current = state;
    this.changedAt = new Date(this.now());
    this.lastReason = reason;
    const change = this.snapshot;
    // A listener that throws must not keep the others from hearing, nor fail the exchange that reported.
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch {
        // The listener's own failure is its own.
      }
    }
  }
}
