import { defineAction } from '../../lib/node-spec';
import { SNAPSHOT_FORMATS, SNAPSHOT_SOURCES, takeSnapshot, type SnapshotSource } from '../../lib/ops/snapshot';
import type { CgiValue } from '../../lib/cgi/codec';
import { oneOf } from '../../lib/input/params';
import { OVERRIDES, payloadFields } from '../../lib/input/payload';
import { CHANNEL_SETTING } from '../../lib/xml/channel';
import { image, ACTION_WORDS } from '../../lib/status/status';

type OutputFormat = (typeof SNAPSHOT_FORMATS)[number];

function formatImage(bytes: Buffer, contentType: string, format: OutputFormat): Buffer | string {
  if (format === 'buffer') return bytes;
  const base64 = bytes.toString('base64');
  return format === 'base64' ? base64 : `data:${contentType};base64,${base64}`;
}

export const spec = defineAction({
  type: 'ipcam-snapshot',
  settings: { source: oneOf(SNAPSHOT_SOURCES), channel: CHANNEL_SETTING, format: oneOf(SNAPSHOT_FORMATS), overrides: OVERRIDES },
  payloadKeys: ['source', 'params', 'channel'],
  status: ['image', ...ACTION_WORDS],
  // The source, params and channel of a message are checked by the snapshot's entry.
  input(payload, s) {
    const override = payloadFields(payload) ?? {};
    const source = (override['source'] ?? s.source ?? 'jpg') as SnapshotSource;
    // The channel setting belongs to the xml source; a message may name one for it.
    const channel = override['channel'] ?? (source === 'xml' ? s.channel : undefined);
    return { source, params: override['params'] as Record<string, CgiValue> | undefined, channel };
  },
  run: (client, request, { signal }) => takeSnapshot(client, { ...request, signal }),
  // Blank Format: a Buffer.
  output: (snapshot, _request, s) => ({ payload: formatImage(snapshot.image, snapshot.contentType, s.format ?? 'buffer'), fields: { contentType: snapshot.contentType }, status: image(snapshot.image.length) }),
});
