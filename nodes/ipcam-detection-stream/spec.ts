import type { NodeSpec } from '../../lib/node-spec';
import { DETECTION_EMITS, DETECTION_MODES, DETECTION_TYPES, IO_IDS } from '../../lib/ops/io';
import { oneOf, optional } from '../../lib/input/params';
import { STREAM_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-detection-stream',
  settings: { detection: oneOf(DETECTION_TYPES), groups: optional(IO_IDS), mode: oneOf(DETECTION_MODES), emit: oneOf(DETECTION_EMITS) },
  status: ['levelEvent', ...STREAM_WORDS, 'levelsRead', 'online', 'offline', 'authFailed', 'requesting'],
};
