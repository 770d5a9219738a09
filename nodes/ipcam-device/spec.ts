import { HEARTBEAT } from '../../lib/health/heartbeat-setting';
import type { NodeSpec } from '../../lib/node-spec';
import { optional, oneOf } from '../../lib/input/params';
import { AUTH_MODES } from '../../lib/transport/auth';
import { HOST, PORT, PROTOCOLS, TIMEOUT } from '../../lib/transport/options';

export const spec: NodeSpec = {
  type: 'ipcam-device',
  settings: { host: HOST, port: optional(PORT), protocol: oneOf(PROTOCOLS), auth: oneOf(AUTH_MODES), timeout: TIMEOUT, heartbeat: HEARTBEAT },
};
