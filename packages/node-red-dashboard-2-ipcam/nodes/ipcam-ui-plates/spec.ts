import type { NodeSpec } from 'node-red-contrib-ipcam/dist/lib/node-spec';
import { UI_PLATES_SETTINGS } from 'node-red-contrib-ipcam/dist/lib/widgets/settings';

export const spec: NodeSpec = {
  type: 'ipcam-ui-plates',
  settings: UI_PLATES_SETTINGS,
  status: ['lastPlate', 'listenFailed', 'noServer', 'badSetting', 'noDashboard'],
};
