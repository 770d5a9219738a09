import type { NodeSpec } from '../../lib/node-spec';

// Device only (an ipcam-device, or blank for every one): nothing for a rule to check.
export const spec: NodeSpec = {
  type: 'ipcam-device-status',
  settings: {},
  status: ['online', 'offline', 'authFailed', 'noDevice', 'devicesUp', 'devicesDown', 'devicesUnknown', 'noDevices', 'failed'],
};
