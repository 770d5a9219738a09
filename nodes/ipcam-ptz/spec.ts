import type { NodeSpec } from '../../lib/node-spec';
import { DEFAULT_SPEED_RANGE } from '../../lib/ops/ptz-xml';
import { int, optional } from '../../lib/input/params';
import { OVERRIDES } from '../../lib/input/payload';
import { PTZ_API_SETTING } from '../../lib/settings';
import { DURATION_SETTING } from '../../lib/ops/ptz-timed-moves';
import { CHANNEL_SETTING } from '../../lib/xml/channel';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-ptz',
  settings: { api: PTZ_API_SETTING, speed: optional(int(DEFAULT_SPEED_RANGE)), duration: DURATION_SETTING, channel: CHANNEL_SETTING, overrides: OVERRIDES },
  // continuous, home and stream belong to the CGI interface, move to its action 'move'; the
  // interface itself refuses them where they do not apply.
  payloadKeys: ['action', 'speed', 'duration', 'channel', 'preset', 'tour', 'continuous', 'home', 'stream', 'move'],
  status: ['ptzDone', ...ACTION_WORDS],
};
