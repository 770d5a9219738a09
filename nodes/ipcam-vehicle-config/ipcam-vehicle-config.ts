import { checkChannel } from '../../lib/xml/channel';
import { vehicleConfig } from '../../lib/status/status';
import { getVehicleConfig, setVehicleConfig } from '../../lib/ops/vehicle-config';
import { payloadFields } from '../../lib/input/payload';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import type { NodeAPI } from '../red';

interface VehicleConfigDef extends ActionDef {
  channel?: string | number;
  overrides?: string;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<VehicleConfigDef>(RED, spec, (_node, def) => async (msg, client, signal) => {
    const { channel: channelOverride, ...change } = payloadFields(msg.payload) ?? {};
    const channelValue = channelOverride ?? def.channel;
    const channel = channelValue === undefined || channelValue === '' ? undefined : checkChannel(channelValue);
    const changing = Object.keys(change).length > 0;
    msg.payload = changing ? await setVehicleConfig(client, change, { channel, signal }) : await getVehicleConfig(client, { channel, signal });
    return vehicleConfig(changing);
  });
};
