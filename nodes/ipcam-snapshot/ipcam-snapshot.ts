import { image as imageStatus } from '../../lib/status/status';
import { SNAPSHOT_FORMATS, takeSnapshot, type SnapshotSource } from '../../lib/ops/snapshot';
import type { CgiValue } from '../../lib/cgi/codec';
import { payloadFields } from '../../lib/input/payload';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import type { NodeAPI, NodeMessage } from '../red';

interface SnapshotDef extends ActionDef {
  source?: string;
  channel?: string | number;
  format?: string;
  overrides?: string;
}

type OutputFormat = (typeof SNAPSHOT_FORMATS)[number];

function formatImage(image: Buffer, contentType: string, format: OutputFormat): Buffer | string {
  if (format === 'buffer') return image;
  const base64 = image.toString('base64');
  return format === 'base64' ? base64 : `data:${contentType};base64,${base64}`;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<SnapshotDef>(RED, spec, (_node, def) => {
    // A format out of the spec's rules is refused on deploy: this never runs with one. Blank: a Buffer.
    const format = (def.format || 'buffer') as OutputFormat;
    return async (msg: NodeMessage, client, signal) => {
      const override = payloadFields(msg.payload) ?? {};
      const source = (override['source'] ?? (def.source || 'jpg')) as SnapshotSource;
      const params = override['params'] as Record<string, CgiValue> | undefined;
      // The channel setting belongs to the xml source; a message may name one for it.
      const channel = override['channel'] ?? (source === 'xml' ? def.channel : undefined);
      const snapshot = await takeSnapshot(client, { source, params, channel, signal });
      msg.payload = formatImage(snapshot.image, snapshot.contentType, format);
      msg['contentType'] = snapshot.contentType;
      return imageStatus(snapshot.image.length);
    };
  });
};
