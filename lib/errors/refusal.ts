/**
 * How a failure is told, in the three places a user looks: the node's status (lib/status: code
 * and a short reason), one line for the log and the Debug sidebar, and the message a
 * Catch node reads. A device's error names the device node by its name and host: with ten
 * devices, "the device rejected the password" must say which. Nothing here holds a secret: the
 * name and host are settings, the message is our own words.
 */
import { oneLine } from './echo';
import type { IpcamError } from './errors';

/** Longest device name or host in a text. */
const LABEL_MAX = 40;

/** The device node a failure came from, as its settings name it. */
export interface DeviceLabel {
  name?: string | undefined;
  host?: string | undefined;
}

/** `'Front gate cam' (10.0.0.5)`, or the host alone for a device without a name. */
export function deviceWords(device: DeviceLabel): string {
  const host = oneLine(device.host ?? '', LABEL_MAX);
  const name = oneLine(device.name ?? '', LABEL_MAX);
  if (name === '') return host === '' ? 'the device' : host;
  return host === '' ? `'${name}'` : `'${name}' (${host})`;
}

/** Codes that come from a device's answer (or its silence): their texts name the device. */
export function isDeviceFailure(err: IpcamError): boolean {
  return err.code !== 'EINPUT';
}

/** The message of a failure: a device's error starts with the device it came from. */
export function failureMessage(err: IpcamError, device?: DeviceLabel): string {
  const message = oneLine(err.message, 400);
  return device && isDeviceFailure(err) ? `${deviceWords(device)}: ${message}` : message;
}

/** The one line of the log and the Debug sidebar: `EINPUT: unknown key "stat" (did you mean "state"?): ...`. */
export function failureLine(err: IpcamError, device?: DeviceLabel): string {
  return `${err.code}: ${failureMessage(err, device)}`;
}

/**
 * A failure in fixed words of ours, without the message (which may quote the device or name its
 * address): for a viewer that must learn nothing of the device, such as a dashboard page.
 */
export function plainReason(err: IpcamError): string {
  switch (err.code) {
    case 'EINPUT':
      return 'invalid input';
    case 'EAUTH':
      return 'auth failed';
    case 'ETIMEOUT':
      return 'timeout';
    case 'ECONN':
      return 'unreachable';
    case 'EHTTP':
      return `HTTP ${err.status ?? 'error'}`;
    case 'EDEVICE':
      return `device error ${err.deviceCode ?? ''}`.trim();
    case 'EPARSE':
      return 'bad answer';
  }
}
