import { addPlates } from '../../lib/ops/plates';
import { handleInput } from '../action';
import { spec } from './spec';
import { reportBatch } from '../plate-results';
import type { Node, NodeAPI, NodeDef } from '../red';

interface PlateAddDef extends NodeDef {
  device?: string;
  group?: string;
  upsert?: boolean;
}

export = function register(RED: NodeAPI): void {
  function IpcamPlateAddNode(this: Node, def: PlateAddDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, spec, def.device, async (msg, client, signal) => {
      const results = await addPlates(client, msg.payload, { group: def.group || undefined, upsert: def.upsert === true, signal });
      msg.payload = results;
      return reportBatch(this, 'added', results);
    }, def);
  }
  RED.nodes.registerType(spec.type, IpcamPlateAddNode as (this: never, def: never) => void);
};
