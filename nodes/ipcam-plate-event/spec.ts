import { DEDUP_SETTING } from '../../lib/events/dedup';
import { GROUPS_SETTING } from '../../lib/events/filter';
import { LIST_TYPES } from '../../lib/events/parse';
import { IMAGE_MODES } from '../../lib/events/plate-message';
import type { NodeSpec } from '../../lib/node-spec';
import { oneOf } from '../../lib/input/params';

export const spec: NodeSpec = {
  type: 'ipcam-plate-event',
  settings: { lists: oneOf(LIST_TYPES), groups: GROUPS_SETTING, dedup: DEDUP_SETTING, images: oneOf(IMAGE_MODES) },
  status: ['starting', 'listening', 'plateSeen', 'alive', 'listenFailed', 'noServer', 'badSetting', 'stopped'],
};
