import type { NodeSpec } from '../../lib/node-spec';
import { SNAPSHOT_FORMATS, SNAPSHOT_SOURCES } from '../../lib/ops/snapshot';
import { oneOf } from '../../lib/input/params';
import { OVERRIDES } from '../../lib/input/payload';
import { CHANNEL_SETTING } from '../../lib/xml/channel';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-snapshot',
  settings: { source: oneOf(SNAPSHOT_SOURCES), channel: CHANNEL_SETTING, format: oneOf(SNAPSHOT_FORMATS), overrides: OVERRIDES },
  payloadKeys: ['source', 'params', 'channel'],
  status: ['image', ...ACTION_WORDS],
};
