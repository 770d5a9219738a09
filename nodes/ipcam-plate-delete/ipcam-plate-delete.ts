import { deletePlates } from '../../lib/ops/plates';
import { handleInput } from '../action';
import { spec } from './spec';
import { reportBatch } from '../plate-results';
import type { Node, NodeAPI, NodeDef } from '../red';

interface PlateDeleteDef extends NodeDef {
  device?: string;
  group?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamPlateDeleteNode(this: Node, def: PlateDeleteDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, spec, def.device, async (msg, client, signal) => {
      const results = await deletePlates(client, msg.payload, { group: def.group || undefined, signal });
      msg.payload = results;
      return reportBatch(this, 'deleted', results);
    }, def);
  }
  RED.nodes.registerType(spec.type, IpcamPlateDeleteNode as (this: never, def: never) => void);
};
