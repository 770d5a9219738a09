import type { NodeSpec } from 'node-red-contrib-ipcam/dist/lib/input/node-spec';
import { UI_CAMERA_SETTINGS } from 'node-red-contrib-ipcam/dist/lib/widgets/settings';

export const spec: NodeSpec = { type: 'ipcam-ui-camera', settings: UI_CAMERA_SETTINGS };
