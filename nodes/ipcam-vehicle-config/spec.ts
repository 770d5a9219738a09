import type { NodeSpec } from '../../lib/node-spec';
import { OVERRIDES } from '../../lib/input/payload';
import { CHANNEL_SETTING } from '../../lib/xml/channel';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-vehicle-config',
  settings: { channel: CHANNEL_SETTING, overrides: OVERRIDES },
  status: ['vehicleConfig', ...ACTION_WORDS],
};
