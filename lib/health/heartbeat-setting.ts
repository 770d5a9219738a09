import { int, withDefault } from '../params';

/** Longest heartbeat setting (s): a day; longer is no heartbeat in any useful sense. */
export const HEARTBEAT_MAX_S = 86_400;
/** The heartbeat of a device node without the setting (s). */
export const HEARTBEAT_DEFAULT_S = 60;
/**
 * Wait before the probe that confirms a first failure, and between probes while the device is
 * offline (ms, or the heartbeat when shorter): a device that comes back is seen within this, and
 * a device that stays down costs one small request per this, however many nodes use it.
 */
export const RETRY_PROBE_MS = 5000;

/** The device node's `heartbeat` setting: whole seconds, blank = the default, 0 = off. */
export const HEARTBEAT = withDefault(int({ min: 0, max: HEARTBEAT_MAX_S }), HEARTBEAT_DEFAULT_S);

/** The heartbeat setting as ms; throws the EINPUT of a bad value. */
export function heartbeatMs(setting: unknown): number {
  return HEARTBEAT.parse(setting, 'heartbeat') * 1000;
}
