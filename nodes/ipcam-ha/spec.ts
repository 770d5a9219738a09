import { HA_SETTINGS } from '../../lib/ha/settings';
import type { NodeSpec } from '../../lib/node-spec';

export const spec: NodeSpec = {
  type: 'ipcam-ha',
  settings: HA_SETTINGS,
  status: ['haActivity', 'connected', 'brokerConnecting', 'brokerDown', 'offline', 'authFailed', 'noBroker', 'badSetting', 'failed'],
};
