import type { NodeSpec } from '../../lib/node-spec';
import { IO_IDS, IO_KINDS } from '../../lib/ops/io';
import { oneOf, optional } from '../../lib/input/params';
import { STREAM_WORDS } from '../../lib/status/status';

const settings = { kind: oneOf(IO_KINDS), ports: optional(IO_IDS) };

export const spec: NodeSpec<typeof settings> = {
  type: 'ipcam-input-monitor',
  settings,
  status: ['ioEvent', ...STREAM_WORDS],
};
