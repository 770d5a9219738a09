/**
 * One camera as a Home Assistant device over MQTT: the discovery config, the states, the events
 * and the commands, between a broker (anything that publishes and subscribes, see HaBroker) and
 * the device's client. Node-RED is not known here: the node hands in its broker connection.
 */
import { IpcamError } from '../errors/errors';
import type { PlateDetection } from '../events/parse';
import type { HealthState } from '../health/device-health';
import { checkIo } from '../ops/io';
import { addPlates, deletePlates } from '../ops/plates';
import { pulseRelay, setRelay } from '../ops/relay';
import { takeSnapshot } from '../ops/snapshot';
import type { DeviceClient } from '../transport/client';
import { parseCommand, type HaCommand } from './commands';
import { HA_OFF, HA_OFFLINE, HA_ON, HA_ONLINE, RETAINED_PLATFORMS, componentsOf, discoveryConfig, droppedComponents, type HaDeviceInfo, type HaOrigin } from './discovery';
import { haEntities, platformOfKey } from './entities';
import { WarningThrottle } from '../events/throttle';
import { KindThrottle, PacedQueue, TokenBucket } from './rate';
import type { HaSettings } from './settings';
import type { HaTopics } from './topics';

/** The broker as the bridge uses it: the user's connection, which publishes only while connected. */
export interface HaBroker {
  readonly connected: boolean;
  publish(topic: string, payload: string | Buffer, retain: boolean): void;
  /** `retained`: the message was stored at the broker and came because of the subscription. */
  subscribe(topic: string, onMessage: (topic: string, payload: Buffer, retained: boolean) => void): void;
  unsubscribe(topic: string): void;
}

export interface HaBridgeOptions {
  settings: HaSettings;
  topics: HaTopics;
  device: HaDeviceInfo;
  origin: HaOrigin;
  broker: HaBroker;
  client: DeviceClient;
  warn(text: string): void;
  /** A failure of what Home Assistant asked for (a refused relay command) or of a picture: once a minute per kind. */
  error(error: IpcamError, what: string): void;
  /** What the bridge just did, for the node's status. */
  activity?(text: string): void;
  random?: () => number;
}

/** Home Assistant's birth: the configs and states again after a delay from this... */
export const BIRTH_DELAY_MIN_MS = 500;
/** ...to this much more, at random, so that cameras and bridges do not all answer at once. */
export const BIRTH_DELAY_SPREAD_MS = 2000;
/** On (re)connect, how long the config retained at the broker may take to come back before ours goes out (ms). */
export const CONFIG_READ_MS = 1000;
/** Relay commands from Home Assistant that reach the device, at most, per second (and at once). */
export const RELAY_COMMANDS_PER_SECOND = 5;
/** Plate changes reach the device at most one a second... */
export const PLATE_CHANGE_INTERVAL_MS = 1000;
/** ...queued up to this many; beyond, dropped with a warning. */
export const PLATE_QUEUE_MAX = 32;
/** Warnings of one kind (ignored commands, a full queue) at most this often; the others are counted (ms). */
export const WARN_EVERY_MS = 60_000;
/** Commands read per turn of the event loop at most; more that come at once are dropped unread. */
export const INBOX_MAX = 64;
/** After a pulse, the relay's state is read again once it has ended, this long after (ms). */
export const PULSE_READ_MARGIN_MS = 300;

export class HaBridge {
  private readonly s: HaSettings;
  private readonly t: HaTopics;
  private readonly broker: HaBroker;
  private device: HaDeviceInfo;
  /** The retained states as last published (or to publish on connect), by topic. */
  private readonly states = new Map<string, string>();
  private picture: Buffer | undefined;
  /** Our components as the config retained at the broker had them (read back on connect). */
  private before = new Map<string, 'live' | 'removed'>();
  /** The config has gone out on this connection. */
  private configured = false;
  private closed = false;
  private readTimer: NodeJS.Timeout | undefined;
  private birthTimer: NodeJS.Timeout | undefined;
  private readonly pulseTimers = new Map<number, NodeJS.Timeout>();
  private readonly aborter = new AbortController();
  private readonly relayBucket = new TokenBucket(RELAY_COMMANDS_PER_SECOND, RELAY_COMMANDS_PER_SECOND);
  private readonly plateQueue: PacedQueue<HaCommand>;
  private readonly warnings: WarningThrottle;
  private readonly failures = new KindThrottle();
  private relayRead: Promise<void> | undefined;
  private relayReadAgain = false;
  private snapshotting = false;
  private snapshotAgain = false;
  /** Subscribed to our config topic: only while reading it back after a connect. */
  private readingConfig = false;
  private readImmediate: NodeJS.Immediate | undefined;
  /** Commands waiting to be read, and how many did not fit (see INBOX_MAX). */
  private readonly inbox: Array<[string, Buffer]> = [];
  private inboxDropped = 0;
  private inboxImmediate: NodeJS.Immediate | undefined;
  /** The command topics of the plate texts. */
  private readonly plateTopics: readonly [string, string];

  constructor(private readonly opts: HaBridgeOptions) {
    this.s = opts.settings;
    this.t = opts.topics;
    this.broker = opts.broker;
    this.device = opts.device;
    this.warnings = new WarningThrottle(opts.warn, WARN_EVERY_MS);
    this.plateQueue = new PacedQueue<HaCommand>({ interval: PLATE_CHANGE_INTERVAL_MS, max: PLATE_QUEUE_MAX, run: (c) => this.changePlate(c) });
    this.states.set(this.t.camera, HA_ONLINE);
    this.plateTopics = [this.t.command('plate_add'), this.t.command('plate_delete')];
  }

  start(): void {
    // Two subscriptions for as long as the node runs (each costs the broker node a topic match
    // per message it receives): Home Assistant's status, and one for every command.
    this.broker.subscribe(this.t.haStatus, (_topic, payload) => this.onHaStatus(payload));
    this.broker.subscribe(this.t.commands, (topic, payload) => this.onCommand(topic, payload));
    if (this.broker.connected) this.brokerConnected();
    this.readRelays();
  }

  /** The broker connected (or connected again): our config goes out once the retained one is read back. */
  brokerConnected(): void {
    if (this.closed) return;
    this.configured = false;
    clearTimeout(this.readTimer);
    // Not from within the broker node's connect handler: it subscribes its stored topics after telling its users.
    clearImmediate(this.readImmediate);
    this.readImmediate = setImmediate(() => this.readConfig());
  }

  /** Subscribes to our config topic for what is retained there, then publishes ours (at the latest after CONFIG_READ_MS). */
  private readConfig(): void {
    this.readImmediate = undefined;
    if (this.closed || !this.broker.connected) return;
    if (!this.readingConfig) {
      this.readingConfig = true;
      this.broker.subscribe(this.t.config, (_topic, payload, retained) => this.onConfig(payload, retained));
    }
    this.readTimer = setTimeout(() => this.configRead(), CONFIG_READ_MS);
  }

  private configRead(): void {
    clearTimeout(this.readTimer);
    this.readTimer = undefined;
    if (this.readingConfig) {
      this.readingConfig = false;
      this.broker.unsubscribe(this.t.config);
    }
    this.publishAll();
  }

  brokerDisconnected(): void {
    this.configured = false;
    clearTimeout(this.readTimer);
    clearTimeout(this.birthTimer);
    clearImmediate(this.readImmediate);
    this.readTimer = this.birthTimer = this.readImmediate = undefined;
  }

  /** Who the device is, once identified: the config says it again. */
  setDevice(device: HaDeviceInfo): void {
    if (JSON.stringify(device) === JSON.stringify(this.device)) return;
    this.device = device;
    if (this.configured) this.publishConfig();
  }

  /** The camera's health: available while online or unknown. */
  cameraHealth(state: HealthState): void {
    this.setState(this.t.camera, state === 'offline' || state === 'auth-failed' ? HA_OFFLINE : HA_ONLINE);
    if (state === 'online') this.readRelays();
  }

  /** One plate post of this device: one event (never retained), the last plate, and a picture when asked. */
  plate(p: PlateDetection): void {
    if (this.closed || !this.s.server) return;
    const event: Record<string, unknown> = { event_type: p.listType, plate: p.plate };
    if (p.group !== undefined) event['group'] = p.group;
    if (p.direction !== undefined) event['direction'] = p.direction;
    if (p.confidence !== undefined) event['confidence'] = p.confidence;
    event['time'] = p.time;
    this.publish(this.t.state('plate'), JSON.stringify(event), false);
    this.setState(this.t.state('last_plate'), p.plate);
    if (this.s.snapshot === 'plate') this.snapshot();
  }

  /** A state of an input (from the stream or a read). */
  input(port: number, active: boolean): void {
    if (this.s.inputs.includes(port)) this.setState(this.t.state(`input_${port}`), active ? HA_ON : HA_OFF);
  }

  /**
   * Stops everything. `removed`: the node is gone, so are its config (Home Assistant then removes
   * the device) and its retained states. `lastOnBridge`: no other camera of this base is left,
   * so the bridge reads offline.
   */
  close(removed: boolean, lastOnBridge: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.aborter.abort();
    this.plateQueue.close();
    this.warnings.close();
    clearTimeout(this.readTimer);
    clearTimeout(this.birthTimer);
    for (const timer of this.pulseTimers.values()) clearTimeout(timer);
    this.pulseTimers.clear();
    clearImmediate(this.readImmediate);
    clearImmediate(this.inboxImmediate);
    this.inbox.length = 0;
    this.broker.unsubscribe(this.t.haStatus);
    this.broker.unsubscribe(this.t.commands);
    if (this.readingConfig) this.broker.unsubscribe(this.t.config);
    if (removed) {
      this.broker.publish(this.t.config, '', true);
      const keys = new Set([...haEntities(this.s).map((e) => e.key), ...this.before.keys()]);
      for (const topic of new Set([...this.states.keys(), ...this.retainedTopics(keys)])) this.broker.publish(topic, '', true);
    }
    if (lastOnBridge) this.broker.publish(this.t.bridge, HA_OFFLINE, true);
  }

  private publish(topic: string, payload: string | Buffer, retain: boolean): void {
    if (!this.closed) this.broker.publish(topic, payload, retain);
  }

  private setState(topic: string, payload: string): void {
    if (this.closed || this.states.get(topic) === payload) return;
    this.states.set(topic, payload);
    this.publish(topic, payload, true);
  }

  private publishConfig(): void {
    const dropped = droppedComponents(this.before, this.s);
    const config = discoveryConfig(this.s, this.t, this.device, this.opts.origin, dropped);
    this.publish(this.t.config, JSON.stringify(config), true);
    // A removed entity's state is not left retained at the broker.
    for (const topic of this.retainedTopics(dropped.keys())) this.publish(topic, '', true);
  }

  /** The state topics of these components that hold a retained state. */
  private retainedTopics(keys: Iterable<string>): string[] {
    const out: string[] = [];
    for (const key of keys) {
      const platform = platformOfKey(key);
      if (platform !== undefined && RETAINED_PLATFORMS.has(platform)) out.push(this.t.state(key));
    }
    return out;
  }

  /** The config, the bridge's availability and every current state (and the last picture). */
  private publishAll(): void {
    clearTimeout(this.readTimer);
    this.readTimer = undefined;
    if (this.closed || !this.broker.connected) return;
    this.configured = true;
    this.publishConfig();
    this.publish(this.t.bridge, HA_ONLINE, true);
    for (const [topic, payload] of this.states) this.publish(topic, payload, true);
    if (this.picture) this.publish(this.t.state('picture'), this.picture, false);
  }

  /**
   * The config retained at the broker, as it comes on subscribing: what we published before
   * (or what someone else wrote there). Only our own component ids in it are believed.
   */
  private onConfig(payload: Buffer, retained: boolean): void {
    if (!retained || this.closed || !this.readingConfig) return;
    this.before = componentsOf(payload);
    this.configRead();
  }

  private onHaStatus(payload: Buffer): void {
    if (this.closed) return;
    const text = payload.length <= 16 ? payload.toString('latin1') : '';
    if (text === HA_ONLINE) return this.afterBirth();
    if (text === HA_OFFLINE) return;
    this.warnings.warn('status', `Ignored a message on ${this.t.haStatus} that is neither ${HA_ONLINE} nor ${HA_OFFLINE} (${payload.length} bytes)`);
  }

  /** Home Assistant (re)started: everything again, once, after a short random delay. */
  private afterBirth(): void {
    if (this.birthTimer !== undefined || !this.broker.connected) return;
    const delay = BIRTH_DELAY_MIN_MS + Math.floor((this.opts.random ?? Math.random)() * BIRTH_DELAY_SPREAD_MS);
    this.birthTimer = setTimeout(() => {
      this.birthTimer = undefined;
      this.publishAll();
    }, delay);
  }

  /**
   * A command is only put aside here: the broker node hands over a whole read of its socket at
   * once (thousands of messages in a flood), and what does not fit the inbox is dropped unread.
   */
  private onCommand(topic: string, payload: Buffer): void {
    if (this.closed) return;
    if (this.inbox.length >= INBOX_MAX) {
      this.inboxDropped++;
      return;
    }
    this.inbox.push([topic, payload]);
    this.inboxImmediate ??= setImmediate(() => this.readInbox());
  }

  private readInbox(): void {
    this.inboxImmediate = undefined;
    const commands = this.inbox.splice(0, this.inbox.length);
    const dropped = this.inboxDropped;
    this.inboxDropped = 0;
    if (dropped > 0) this.warnings.warn('flood', () => `Home Assistant commands dropped unread, nothing sent: ${dropped} came at once beyond the ${INBOX_MAX} read per turn`);
    for (const [topic, payload] of commands) this.command(topic, payload);
  }

  private command(topic: string, payload: Buffer): void {
    // A plate change with the queue full is dropped before its plate is read.
    if (this.plateQueue.full && (topic === this.plateTopics[0] || topic === this.plateTopics[1])) return this.plateQueueFull();
    const parsed = parseCommand(this.t, this.s, topic, payload);
    if (!parsed.ok) {
      const reason = parsed.reason;
      return this.warnings.warn(parsed.kind, () => `Home Assistant command ignored, nothing sent: ${reason()}`);
    }
    const command = parsed.command;
    if (command.kind === 'switch' || command.kind === 'pulse') return this.relay(command);
    if (!this.plateQueue.push(command)) this.plateQueueFull();
  }

  private plateQueueFull(): void {
    this.warnings.warn('queue', `Plate changes from Home Assistant dropped: ${PLATE_QUEUE_MAX} are waiting already (one a second reaches the device)`);
  }

  /** The relay node's operations and answer path: a refused command is an error, and the state is read from the device after it. */
  private relay(command: Extract<HaCommand, { kind: 'switch' | 'pulse' }>): void {
    if (!this.relayBucket.take()) {
      return this.warnings.warn('rate', `Home Assistant relay commands beyond ${RELAY_COMMANDS_PER_SECOND} a second are dropped, nothing sent`);
    }
    const signal = this.aborter.signal;
    const output = command.output;
    const run = command.kind === 'switch' ? setRelay(this.opts.client, output, command.on, signal) : pulseRelay(this.opts.client, output, this.s.pulse, signal);
    run.then(
      () => {
        this.opts.activity?.(`relay ${output} ${command.kind === 'pulse' ? 'pulsed' : command.on ? 'on' : 'off'}`);
        if (command.kind === 'pulse') this.readAfterPulse(output);
      },
      (err: unknown) => this.failed(err, `Relay ${output} from Home Assistant`),
    ).finally(() => this.readRelays());
  }

  private readAfterPulse(output: number): void {
    if (this.closed) return;
    clearTimeout(this.pulseTimers.get(output));
    this.pulseTimers.set(
      output,
      setTimeout(() => {
        this.pulseTimers.delete(output);
        this.readRelays();
      }, this.s.pulse + PULSE_READ_MARGIN_MS),
    );
  }

  /** The relays' states as the device reports them; one read at a time, one more after it if asked meanwhile. */
  private readRelays(): void {
    if (this.closed || this.s.relays.length === 0) return;
    if (this.relayRead) {
      this.relayReadAgain = true;
      return;
    }
    this.relayRead = checkIo(this.opts.client, 'output', [...this.s.relays], this.aborter.signal)
      .then(
        (states) => {
          for (const state of states) if (this.s.relays.includes(state.port)) this.setState(this.t.state(`relay_${state.port}`), state.active ? HA_ON : HA_OFF);
        },
        // An unreadable state is left as it was: the device's health tells whether it is there.
        () => undefined,
      )
      .finally(() => {
        this.relayRead = undefined;
        if (this.relayReadAgain) {
          this.relayReadAgain = false;
          this.readRelays();
        }
      });
  }

  private async changePlate(command: HaCommand): Promise<void> {
    if (this.closed || (command.kind !== 'plate-add' && command.kind !== 'plate-delete')) return;
    const verb = command.kind === 'plate-add' ? 'added' : 'deleted';
    try {
      const options = { group: command.plate.group, signal: this.aborter.signal };
      const [result] = command.kind === 'plate-add' ? await addPlates(this.opts.client, [command.plate], options) : await deletePlates(this.opts.client, [command.plate], options);
      if (result?.ok) this.opts.activity?.(`plate ${verb}`);
      else this.warnings.warn('plate-result', `Plate from Home Assistant not ${verb}: ${result?.error ?? `device code ${result?.errorCode ?? '?'}`}`);
    } catch (err) {
      this.failed(err, `Plate ${command.kind === 'plate-add' ? 'add' : 'delete'} from Home Assistant`);
    }
  }

  /** A picture on each plate: one request at a time, and one more for the plates that came meanwhile. */
  private snapshot(): void {
    if (this.snapshotting) {
      this.snapshotAgain = true;
      return;
    }
    this.snapshotting = true;
    takeSnapshot(this.opts.client, { signal: this.aborter.signal })
      .then(
        (shot) => {
          if (shot.contentType !== 'image/jpeg') return this.warnings.warn('picture', 'The camera\'s snapshot is not a JPEG: Home Assistant\'s picture is not updated');
          this.picture = shot.image;
          this.publish(this.t.state('picture'), shot.image, false);
        },
        (err: unknown) => this.failed(err, 'The picture for Home Assistant'),
      )
      .finally(() => {
        this.snapshotting = false;
        if (this.snapshotAgain && !this.closed) {
          this.snapshotAgain = false;
          this.snapshot();
        }
      });
  }

  private failed(err: unknown, what: string): void {
    if (this.closed) return;
    const error = err instanceof IpcamError ? err : new IpcamError('EPARSE', `Unexpected failure (${err instanceof Error ? err.name : typeof err})`);
    if (this.failures.admit(`${what} ${error.code} ${error.message}`) !== undefined) this.opts.error(error, what);
  }
}
