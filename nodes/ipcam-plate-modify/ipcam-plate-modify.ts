import { inputError } from '../../lib/errors/errors';
import { plateModified } from '../../lib/status/status';
import { modifyPlate } from '../../lib/ops/plates';
import { payloadFields } from '../../lib/input/payload';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import type { NodeAPI } from '../red';

interface PlateModifyDef extends ActionDef {
  group?: string;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<PlateModifyDef>(RED, spec, (_node, def) => async (msg, client, signal) => {
    const change = payloadFields(msg.payload);
    if (!change) throw inputError('msg.payload must be { plate, group?, owner?, phone?, begin?, end? }');
    msg.payload = await modifyPlate(client, { group: def.group || undefined, ...change }, { signal });
    return plateModified();
  });
};
