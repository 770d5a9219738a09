import { queryPlates, type PlateQuery } from '../../lib/ops/plates';
import { platesFound } from '../../lib/status/status';
import { payloadFields } from '../../lib/input/payload';
import { handleInput } from '../action';
import { spec } from './spec';
import type { Node, NodeAPI, NodeDef } from '../red';

interface PlateQueryDef extends NodeDef {
  device?: string;
  group?: string;
  overrides?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamPlateQueryNode(this: Node, def: PlateQueryDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, spec, def.device, async (msg, client, signal) => {
      const query = { group: def.group || undefined, ...payloadFields(msg.payload) } as PlateQuery;
      const { plates, total } = await queryPlates(client, query, { signal });
      msg.payload = plates;
      msg['total'] = total;
      return platesFound(plates.length, total);
    }, def);
  }
  RED.nodes.registerType(spec.type, IpcamPlateQueryNode as (this: never, def: never) => void);
};
