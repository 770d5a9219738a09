import { addPlates } from '../../lib/ops/plates';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import { reportBatch } from '../plate-results';
import type { NodeAPI } from '../red';

interface PlateAddDef extends ActionDef {
  group?: string;
  upsert?: boolean;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<PlateAddDef>(RED, spec, (node, def) => async (msg, client, signal) => {
    const results = await addPlates(client, msg.payload, { group: def.group || undefined, upsert: def.upsert === true, signal });
    msg.payload = results;
    return reportBatch(node, 'added', results);
  });
};
