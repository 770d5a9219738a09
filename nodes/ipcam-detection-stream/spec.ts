import { defineAction, type NodeSpec } from '../../lib/node-spec';
import { DETECTION_EMITS, DETECTION_MODES, DETECTION_TYPES, IO_IDS, readDetection } from '../../lib/ops/io';
import { oneOf, optional } from '../../lib/input/params';
import { levelsRead, STREAM_WORDS } from '../../lib/status/status';

const settings = { detection: oneOf(DETECTION_TYPES), groups: optional(IO_IDS), mode: oneOf(DETECTION_MODES), emit: oneOf(DETECTION_EMITS) };

export const spec: NodeSpec<typeof settings> = {
  type: 'ipcam-detection-stream',
  settings,
  status: ['levelEvent', ...STREAM_WORDS, 'levelsRead', 'online', 'offline', 'authFailed', 'requesting'],
};

/** Single mode: one reading per input message, on the device's pool like any request (its payload is not read). */
export const singleReading = defineAction({
  ...spec,
  input: (_payload, s) => ({ type: s.detection ?? 'motion', groups: s.groups ?? [] }),
  run: (client, { type, groups }, { signal }) => readDetection(client, type, groups, signal),
  output: (levels, { type }) => ({ payload: levels, fields: { topic: type }, status: levelsRead(levels.length) }),
});
