import { queryPlates, type PlateQuery } from '../../lib/ops/plates';
import { platesFound } from '../../lib/status/status';
import { payloadFields } from '../../lib/input/payload';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import type { NodeAPI } from '../red';

interface PlateQueryDef extends ActionDef {
  group?: string;
  overrides?: string;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<PlateQueryDef>(RED, spec, (_node, def) => async (msg, client, signal) => {
    const query = { group: def.group || undefined, ...payloadFields(msg.payload) } as PlateQuery;
    const { plates, total } = await queryPlates(client, query, { signal });
    msg.payload = plates;
    msg['total'] = total;
    return platesFound(plates.length, total);
  });
};
