import type { NodeSpec } from '../../lib/node-spec';
import { RELAY_SETTINGS } from '../../lib/ops/relay';
import { OVERRIDES } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-relay',
  settings: { ...RELAY_SETTINGS, overrides: OVERRIDES },
  payloadKeys: ['output', 'state', 'pulse', 'sequence'],
  status: ['relayOn', 'relayOff', ...ACTION_WORDS],
};
