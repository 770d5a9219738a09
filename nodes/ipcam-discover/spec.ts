import { DISCOVERY_DURATION, DISCOVERY_IDENTIFY, DISCOVERY_INTERFACE, DISCOVERY_TARGETS } from '../../lib/discovery/probe';
import type { NodeSpec } from '../../lib/node-spec';
import { optional } from '../../lib/input/params';

const settings = { duration: DISCOVERY_DURATION, interface: optional(DISCOVERY_INTERFACE), targets: optional(DISCOVERY_TARGETS), identify: DISCOVERY_IDENTIFY };

export const spec: NodeSpec<typeof settings> = {
  type: 'ipcam-discover',
  settings,
  status: ['searching', 'found', 'failed'],
};
