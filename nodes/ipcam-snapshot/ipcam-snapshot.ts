import { echo } from '../../lib/errors/echo';
import { image as imageStatus } from '../../lib/status/status';
import { inputError } from '../../lib/errors/errors';
import { SNAPSHOT_FORMATS, takeSnapshot, type SnapshotSource } from '../../lib/ops/snapshot';
import type { CgiValue } from '../../lib/cgi/codec';
import { payloadFields } from '../../lib/input/payload';
import { handleInput } from '../action';
import { spec } from './spec';
import type { Node, NodeAPI, NodeDef, NodeMessage } from '../red';

interface SnapshotDef extends NodeDef {
  device?: string;
  source?: string;
  channel?: string | number;
  format?: string;
  overrides?: string;
}

type OutputFormat = (typeof SNAPSHOT_FORMATS)[number];
const FORMATS: readonly string[] = SNAPSHOT_FORMATS;

function formatImage(image: Buffer, contentType: string, format: OutputFormat): Buffer | string {
  if (format === 'buffer') return image;
  const base64 = image.toString('base64');
  return format === 'base64' ? base64 : `data:${contentType};base64,${base64}`;
}

export = function register(RED: NodeAPI): void {
  function IpcamSnapshotNode(this: Node, def: SnapshotDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, spec, def.device, async (msg: NodeMessage, client, signal) => {
      const format = (def.format || 'buffer') as OutputFormat;
      if (!FORMATS.includes(format)) throw inputError(`Unknown output format ${echo(format)}: use buffer, base64 or dataurl`);
      const override = payloadFields(msg.payload) ?? {};
      const source = (override['source'] ?? (def.source || 'jpg')) as SnapshotSource;
      const params = override['params'] as Record<string, CgiValue> | undefined;
      // The channel setting belongs to the xml source; a message may name one for it.
      const channel = override['channel'] ?? (source === 'xml' ? def.channel : undefined);
      const snapshot = await takeSnapshot(client, { source, params, channel, signal });
      msg.payload = formatImage(snapshot.image, snapshot.contentType, format);
      msg['contentType'] = snapshot.contentType;
      return imageStatus(snapshot.image.length);
    }, def);
  }
  RED.nodes.registerType(spec.type, IpcamSnapshotNode as (this: never, def: never) => void);
};
