import { int, withDefault } from '../input/params';
import { FAILURES_BEFORE_OFFLINE } from './device-health';

/** Longest heartbeat setting (s): a day; longer is no heartbeat in any useful sense. */
export const HEARTBEAT_MAX_S = 86_400;
/**
 * The heartbeat of a device node without the setting (s). 10 s: with the default timeout an idle
 * gate camera that dies is offline within 35 s (offlineWithinMs), 15 s when its address refuses
 * connections; a minute (the former default) left a gate up to 85 s unaware. The cost is one
 * small read per 10 s, and none while the nodes talk to the camera anyway (a beat is skipped
 * then): far below the keep-alive posts a camera sends its event server on its own.
 */
export const HEARTBEAT_DEFAULT_S = 10;
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

/**
 * The longest a device that stopped answering stays `online` after its last answer (ms), from
 * the heartbeat and the device timeout (ms): the next beat comes at most a heartbeat after that
 * answer and fails within the timeout; FAILURES_BEFORE_OFFLINE - 1 more probes follow, each
 * RETRY_PROBE_MS (or the heartbeat, when shorter) after the failure before, each failing within
 * the timeout. A device whose address refuses connections fails each probe at once, so it is
 * offline within the same sum without the timeouts. Infinity with the heartbeat off: then only
 * the nodes' own requests tell.
 */
export function offlineWithinMs(heartbeatMs: number, timeoutMs: number): number {
  if (heartbeatMs <= 0) return Infinity;
  return heartbeatMs + (FAILURES_BEFORE_OFFLINE - 1) * Math.min(heartbeatMs, RETRY_PROBE_MS) + FAILURES_BEFORE_OFFLINE * timeoutMs;
}
