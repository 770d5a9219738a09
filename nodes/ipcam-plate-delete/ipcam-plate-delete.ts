import { deletePlates } from '../../lib/ops/plates';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import { reportBatch } from '../plate-results';
import type { NodeAPI } from '../red';

interface PlateDeleteDef extends ActionDef {
  group?: string;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<PlateDeleteDef>(RED, spec, (node, def) => async (msg, client, signal) => {
    const results = await deletePlates(client, msg.payload, { group: def.group || undefined, signal });
    msg.payload = results;
    return reportBatch(node, 'deleted', results);
  });
};
