import type { WatchedDevice } from '../../lib/health/board';
import type { HealthChange, HealthState } from '../../lib/health/device-health';
import { IpcamError } from '../../lib/errors/errors';
import { unknownWord } from '../../lib/input/suggest';
import { reportFailure } from '../action';
import { healthBoard } from '../health-board';
import { cleared, devicesSummary, deviceState, noDevice, type NoStatus, type Status } from '../../lib/status/status';
import type { Node, NodeAPI, NodeDef, NodeMessage } from '../red';

interface DeviceStatusDef extends NodeDef {
  /** One ipcam-device's id; blank = every device of this Node-RED. */
  device?: string;
}

/** `msg.payload` of a device-status message. */
interface DeviceStatusPayload {
  device: { id: string; name: string; host: string };
  state: HealthState;
  previous: HealthState;
  /** ISO 8601: when the device entered `state`. */
  since: string;
  reason?: string;
  info?: { model?: string; firmware?: string; mac?: string };
}

function payloadOf(device: WatchedDevice, change: HealthChange): DeviceStatusPayload {
  const info = device.health.info;
  return {
    device: { id: device.id, name: device.name, host: device.host },
    state: change.state,
    previous: change.previous,
    since: change.since.toISOString(),
    ...(change.reason !== undefined && { reason: change.reason }),
    ...(info !== undefined && { info: { ...info } }),
  };
}

export = function register(RED: NodeAPI): void {
  function IpcamDeviceStatusNode(this: Node, def: DeviceStatusDef): void {
    RED.nodes.createNode(this, def);
    const wanted = (def.device ?? '').trim();
    const watches = (device: WatchedDevice): boolean => wanted === '' || device.id === wanted;
    const watched = (): WatchedDevice[] => healthBoard.list().filter(watches);

    const message = (device: WatchedDevice, change: HealthChange): NodeMessage => ({ topic: device.name, payload: payloadOf(device, change) });
    const showStatus = (): void => this.status(summary(wanted, watched()));

    const unsubscribe = healthBoard.subscribe({
      changed: (device, change) => {
        if (!watches(device)) return;
        this.send(message(device, change));
        showStatus();
      },
      added: (device) => {
        if (!watches(device)) return;
        device.wanted();
        showStatus();
      },
    });
    // Devices deployed before this node: their heartbeats are asked for a first read now.
    for (const device of watched()) device.wanted();
    showStatus();

    this.on('input', (msg, send, done) => {
      const command = typeof msg.payload === 'string' ? msg.payload.trim().toLowerCase() : '';
      if (command !== 'check') return reportFailure(this, msg, unknownWord('command', msg.payload, ['check'], "send 'check'"), done);
      const devices = watched();
      if (wanted !== '' && devices.length === 0) return reportFailure(this, msg, new IpcamError('EINPUT', 'The ipcam-device of this node is not deployed'), done);
      // The first device's state on the message that came in; the others (all devices) each on a message of their own.
      devices.forEach((device, i) => {
        const out = message(device, device.health.snapshot);
        send(i === 0 ? Object.assign(msg, out) : out);
      });
      showStatus();
      done();
    });

    this.on('close', (_removed, done) => {
      unsubscribe();
      this.status(cleared());
      done();
    });
  }

  RED.nodes.registerType('ipcam-device-status', IpcamDeviceStatusNode as (this: never, def: never) => void);
};

/** The node's own status: its device's state, or how many of all devices are in each state. */
function summary(wanted: string, devices: WatchedDevice[]): Status | NoStatus {
  if (wanted !== '') {
    const device = devices[0];
    return device ? deviceState(device.health.state) : noDevice();
  }
  const count = (state: HealthState): number => devices.filter((d) => d.health.state === state).length;
  return devicesSummary(count('online'), count('offline') + count('auth-failed'), devices.length);
}
