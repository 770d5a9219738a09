import { DEDUP_SETTING } from '../../lib/events/dedup';
import { GROUP_FILTER, LIST_FILTER } from '../../lib/events/filter';
import { IMAGE_MODES } from '../../lib/events/plate-message';
import type { NodeSpec } from '../../lib/node-spec';
import { oneOf, withDefault } from '../../lib/input/params';

const settings = { lists: LIST_FILTER, groups: GROUP_FILTER, dedup: DEDUP_SETTING, images: withDefault(oneOf(IMAGE_MODES), 'none') };

export const spec: NodeSpec<typeof settings> = {
  type: 'ipcam-plate-event',
  settings,
  status: ['starting', 'listening', 'plateSeen', 'alive', 'listenFailed', 'noServer', 'badSetting', 'stopped'],
};
