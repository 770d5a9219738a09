import type { NodeSpec } from '../../lib/input/node-spec';
import { RELAY_SETTINGS } from '../../lib/ops/relay';
import { OVERRIDES } from '../../lib/input/payload';

export const spec: NodeSpec = { type: 'ipcam-relay', settings: { ...RELAY_SETTINGS, overrides: OVERRIDES }, payloadKeys: ['output', 'state', 'pulse', 'sequence'] };
