import type { NodeSpec } from '../../lib/node-spec';
import { IO_IDS, IO_KINDS } from '../../lib/ops/io';
import { oneOf, optional } from '../../lib/input/params';
import { STREAM_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-input-monitor',
  settings: { kind: oneOf(IO_KINDS), ports: optional(IO_IDS) },
  status: ['ioEvent', ...STREAM_WORDS],
};
