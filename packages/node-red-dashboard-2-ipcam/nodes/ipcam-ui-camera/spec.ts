import type { NodeSpec } from 'node-red-contrib-ipcam/dist/lib/node-spec';
import { UI_CAMERA_SETTINGS } from 'node-red-contrib-ipcam/dist/lib/widgets/settings';

export const spec: NodeSpec = {
  type: 'ipcam-ui-camera',
  settings: UI_CAMERA_SETTINGS,
  status: ['viewing', 'nobodyViewing', 'paused', 'resumed', 'noDevice', 'badSetting', 'noDashboard', 'failed'],
};
