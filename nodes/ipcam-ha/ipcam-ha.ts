import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { identifyDevice } from '../../lib/ops/device-info';
import { oneLine } from '../../lib/errors/echo';
import { IpcamError } from '../../lib/errors/errors';
import { fromDevice, hostAddresses } from '../../lib/events/filter';
import { LatestThrottle } from '../../lib/events/throttle';
import { HaBridge, type HaBroker } from '../../lib/ha/bridge';
import type { HaDeviceInfo, HaOrigin } from '../../lib/ha/discovery';
import { InputWatch } from '../../lib/ha/inputs';
import { haSettings, type HaSettings } from '../../lib/ha/settings';
import { HaTopics, objectIdOf } from '../../lib/ha/topics';
import { failureLine } from '../../lib/errors/refusal';
import { badSetting, brokerState as brokerStatus, connected, deviceState, failed, haActivity, noBroker, type Status } from '../../lib/status/status';
import type { DeviceClient } from '../../lib/transport/client';
import { FailureLine, deviceOf } from '../action';
import type { DeviceConfigNode } from '../device-config';
import type { EventServerConfigNode } from '../event-config';
import { healthBoard } from '../health-board';
import type { Node, NodeAPI, NodeDef, NodeStatus } from '../red';
import { RECONNECT_MAX_MS } from '../stream-node';

interface HaDef extends NodeDef {
  broker?: string;
  device?: string;
  server?: string;
  prefix?: string;
  base?: string;
  relays?: string;
  pulse?: string | number;
  inputs?: string;
  snapshot?: string;
  plates?: string;
}

/**
 * The core `mqtt-broker` config node (nodes/core/network/10-mqtt.js, the same file in Node-RED
 * 4.1 and 5.0), used through the interface its own mqtt in/out nodes use: one connection per
 * broker, shared with the user's mqtt nodes, with the user's TLS, credentials, birth and will.
 */
interface MqttBrokerNode {
  id: string;
  type: string;
  connected?: boolean;
  autoConnect?: boolean;
  /** Adds a user; the first one connects (when auto-connect is on). Users hear of the connection through their `status`. */
  register(user: Node): void;
  /** Removes a user; `autoDisconnect` with no user left closes the connection. */
  deregister(user: Node, done: () => void, autoDisconnect?: boolean): void;
  /** Kept across reconnects; the callback gets the payload as a Buffer (MQTT.js). */
  subscribe(topic: string, options: { qos: 0 | 1 | 2 }, callback: (topic: string, payload: Buffer, packet?: { retain?: boolean }) => void, ref: string): void;
  unsubscribe(topic: string, ref: string, removeClientSubscription?: boolean): void;
  /** Sends only while connected; otherwise does nothing (and never calls `done`). */
  publish(msg: { topic: string; payload: string | Buffer; qos: 0 | 1 | 2; retain: boolean }, done?: (err?: unknown) => void): void;
}

function isBroker(node: unknown): node is MqttBrokerNode {
  const n = node as Partial<MqttBrokerNode> | null;
  return n?.type === 'mqtt-broker' && typeof n.register === 'function' && typeof n.subscribe === 'function' && typeof n.publish === 'function';
}

/** This package as the config's origin (`o`). */
function origin(): HaOrigin {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
    return { name: String(pkg.name ?? 'node-red-contrib-ipcam'), sw: String(pkg.version ?? '') };
  } catch {
    return { name: 'node-red-contrib-ipcam', sw: '' };
  }
}

/**
 * The name Home Assistant shows: this node's, else the device node's, unless it holds the
 * device's address or a credential (a device named by its IP): then a plain one.
 */
function deviceName(def: HaDef, device: DeviceConfigNode): string {
  const privateWords = [device.host, device.credentials?.username, device.credentials?.password].filter((w): w is string => typeof w === 'string' && w.trim() !== '').map((w) => w.trim().toLowerCase());
  for (const candidate of [def.name, device.name]) {
    const name = oneLine(candidate ?? '', 64);
    if (name !== '' && !privateWords.some((w) => name.toLowerCase().includes(w))) return name;
  }
  return 'IP camera';
}

/** Cameras of each base topic on each broker of this Node-RED: the last one to close sets the bridge offline. */
const bridgesOpen = new Map<string, number>();

/** Plate statuses: at most one a second, the latest shown. */
const STATUS_INTERVAL_MS = 1000;

export = function register(RED: NodeAPI): void {
  function IpcamHaNode(this: Node, def: HaDef): void {
    RED.nodes.createNode(this, def);
    const show = this.status.bind(this);
    const refuse = (status: Status, error: IpcamError): void => {
      show(status);
      this.error(new FailureLine(failureLine(error), error.code));
    };

    let settings: HaSettings;
    let device: DeviceConfigNode;
    let client: DeviceClient;
    try {
      settings = haSettings(def);
      device = deviceOf(RED, def.device);
      client = device.getClient();
    } catch (err) {
      const error = err instanceof IpcamError ? err : new IpcamError('EINPUT', String(err));
      return refuse(failed(error), error);
    }
    const broker = def.broker ? RED.nodes.getNode(def.broker) : null;
    if (!isBroker(broker)) return refuse(noBroker(), new IpcamError('EINPUT', 'No MQTT broker configured: choose an mqtt-broker node'));
    const server = settings.server ? (RED.nodes.getNode(def.server as string) as EventServerConfigNode | null) : null;
    if (settings.server && !server?.server) return refuse(badSetting('server setting'), new IpcamError('EINPUT', server?.problem ?? 'The event server of this node is not deployed: choose an ipcam-event-server or leave it blank'));

    const topics = new HaTopics(settings.prefix, settings.base, objectIdOf(device.id));
    const label = { name: device.name, host: device.host };
    let identity: HaDeviceInfo = { name: deviceName(def, device) };
    const ref = this.id;
    const port: HaBroker = {
      get connected() {
        return broker.connected === true;
      },
      // The outcome is MQTT.js's business: a failed publish is not a flow error (and must not log the payload).
      publish: (topic, payload, retain) => broker.publish({ topic, payload, qos: 1, retain }, () => undefined),
      subscribe: (topic, onMessage) => broker.subscribe(topic, { qos: 1 }, (t, payload, packet) => onMessage(t, Buffer.isBuffer(payload) ? payload : Buffer.from(String(payload)), packet?.retain === true), ref),
      unsubscribe: (topic) => broker.unsubscribe(topic, ref, true),
    };

    let brokerState: 'connected' | 'connecting' | 'disconnected' = broker.connected === true ? 'connected' : 'disconnected';
    let activity: Status | undefined;
    const refresh = (): void => {
      if (brokerState !== 'connected') {
        return show(brokerStatus(brokerState, broker.autoConnect !== false));
      }
      const health = device.health.state;
      if (health === 'offline' || health === 'auth-failed') return show(deviceState(health));
      show(activity ?? connected());
    };
    const activityStatus = new LatestThrottle<Status>((status) => {
      activity = status;
      refresh();
    }, STATUS_INTERVAL_MS);

    const bridge = new HaBridge({
      settings,
      topics,
      device: identity,
      origin: origin(),
      broker: port,
      client,
      warn: (text) => this.warn(text),
      error: (error, what) => this.error(new FailureLine(`${what}: ${failureLine(error, label)}`, error.code), { payload: { ha: what }, error: error.toJSON() }),
      activity: (text) => activityStatus.set(haActivity(text)),
    });

    // The broker tells its users of its connection through their status, as it tells its own
    // mqtt nodes: that call is taken here as the news it is, and the node shows its own status.
    this.status = (status) => {
      const state = broker.connected === true ? 'connected' : (status as NodeStatus).fill === 'yellow' ? 'connecting' : 'disconnected';
      if (state === brokerState) return;
      const was = brokerState;
      brokerState = state;
      if (state === 'connected') bridge.brokerConnected();
      else if (was === 'connected') bridge.brokerDisconnected();
      refresh();
    };

    const key = `${broker.id}\u0000${settings.base}`;
    bridgesOpen.set(key, (bridgesOpen.get(key) ?? 0) + 1);
    const release = device.registerUser(this.id);
    broker.register(this);
    bridge.start();
    bridge.cameraHealth(device.health.state);

    // Who the device is, once: the config then names its model and firmware.
    const aborter = new AbortController();
    let identified = false;
    const identify = (): void => {
      if (identified) return;
      identified = true;
      identifyDevice(client, aborter.signal).then(
        (info) => {
          identity = { name: identity.name, ...(info.model !== undefined && { model: oneLine(info.model, 64) }), ...(info.firmware !== undefined && { firmware: oneLine(info.firmware, 64) }) };
          bridge.setDevice(identity);
        },
        // Not identified now: again the next time the device comes online.
        () => (identified = false),
      );
    };
    identify();
    const stopHealth = device.health.subscribe((change) => {
      bridge.cameraHealth(change.state);
      if (change.state === 'online') identify();
      refresh();
    });
    healthBoard.get(device.id)?.wanted();

    // Plates: the posts of this device only, told by the socket's address as plate-event does.
    let addresses: Set<string> | undefined;
    void hostAddresses(device.host).then((a) => (addresses = a));
    const unsubscribePosts = server?.server?.subscribe({
      onPost: (received) => {
        if (addresses === undefined || !fromDevice(addresses, received.remoteAddress)) return;
        for (const post of received.posts) {
          if (post.kind !== 'plate') continue;
          bridge.plate(post);
          activityStatus.set(haActivity(post.plate.slice(0, 12)));
        }
      },
    });

    const inputs =
      settings.inputs.length > 0
        ? new InputWatch({
            client,
            ports: settings.inputs,
            onInput: (p, active) => bridge.input(p, active),
            onError: (error) => this.error(new FailureLine(`Inputs for Home Assistant: ${failureLine(error, label)}`, error.code), { payload: { ha: 'inputs' }, error: error.toJSON() }),
            onWarning: (text) => this.warn(text),
            backoff: { max: RECONNECT_MAX_MS },
            ...(device.heartbeat > 0 && { health: device.health }),
          })
        : undefined;
    inputs?.start();
    refresh();

    this.on('close', (removed, done) => {
      aborter.abort();
      stopHealth();
      unsubscribePosts?.();
      activityStatus.cancel();
      const left = (bridgesOpen.get(key) ?? 1) - 1;
      if (left > 0) bridgesOpen.set(key, left);
      else bridgesOpen.delete(key);
      // Written to the connection before the broker node may close it (nodes stop before config nodes).
      bridge.close(removed, left === 0);
      const stopped = inputs?.stop() ?? Promise.resolve();
      release(stopped);
      const deregistered = new Promise<void>((resolve) => broker.deregister(this, resolve, removed));
      void Promise.allSettled([stopped, deregistered]).then(() => {
        show({});
        done();
      });
    });
  }

  RED.nodes.registerType('ipcam-ha', IpcamHaNode as (this: never, def: never) => void);

};
