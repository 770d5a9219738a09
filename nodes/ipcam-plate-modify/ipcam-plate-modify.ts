import { inputError } from '../../lib/errors/errors';
import { plateModified } from '../../lib/status/status';
import { modifyPlate } from '../../lib/ops/plates';
import { payloadFields } from '../../lib/input/payload';
import { handleInput } from '../action';
import { spec } from './spec';
import type { Node, NodeAPI, NodeDef } from '../red';

interface PlateModifyDef extends NodeDef {
  device?: string;
  group?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamPlateModifyNode(this: Node, def: PlateModifyDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, spec, def.device, async (msg, client, signal) => {
      const change = payloadFields(msg.payload);
      if (!change) throw inputError('msg.payload must be { plate, group?, owner?, phone?, begin?, end? }');
      msg.payload = await modifyPlate(client, { group: def.group || undefined, ...change }, { signal });
      return plateModified();
    }, def);
  }
  RED.nodes.registerType(spec.type, IpcamPlateModifyNode as (this: never, def: never) => void);
};
