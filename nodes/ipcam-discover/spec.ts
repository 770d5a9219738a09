import { DISCOVERY_DURATION, DISCOVERY_IDENTIFY, DISCOVERY_INTERFACE, DISCOVERY_TARGETS } from '../../lib/discovery/probe';
import type { NodeSpec } from '../../lib/node-spec';
import { optional } from '../../lib/input/params';

export const spec: NodeSpec = {
  type: 'ipcam-discover',
  settings: { duration: DISCOVERY_DURATION, interface: optional(DISCOVERY_INTERFACE), targets: optional(DISCOVERY_TARGETS), identify: DISCOVERY_IDENTIFY },
  status: ['searching', 'found', 'failed'],
};
