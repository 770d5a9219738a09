import type { NodeSpec } from '../../lib/input/node-spec';
import { OVERRIDES } from '../../lib/input/payload';
import { CHANNEL_SETTING } from '../../lib/xml/channel';

export const spec: NodeSpec = { type: 'ipcam-vehicle-config', settings: { channel: CHANNEL_SETTING, overrides: OVERRIDES } };
