import type { HealthState } from '../lib/health/device-health';
import type { NodeStatus } from './red';

/**
 * A device's state as a node status: what a node shows when it is not showing a result of its
 * own. `unknown` shows nothing (a node just deployed keeps its empty status).
 */
export function healthStatus(state: HealthState): NodeStatus | Record<string, never> {
  switch (state) {
    case 'online':
      return { fill: 'green', shape: 'dot', text: 'online' };
    case 'offline':
      // A failure, not an idle node (grey): red, as DESIGN's status rules have failures.
      return { fill: 'red', shape: 'ring', text: 'offline' };
    case 'auth-failed':
      return { fill: 'red', shape: 'ring', text: 'auth failed' };
    case 'unknown':
      return {};
  }
}
