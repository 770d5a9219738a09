import { checkChannel } from '../../lib/xml/channel';
import { vehicleConfig } from '../../lib/status/status';
import { getVehicleConfig, setVehicleConfig } from '../../lib/ops/vehicle-config';
import { payloadFields } from '../../lib/input/payload';
import { handleInput } from '../action';
import { spec } from './spec';
import type { Node, NodeAPI, NodeDef } from '../red';

interface VehicleConfigDef extends NodeDef {
  device?: string;
  channel?: string | number;
  overrides?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamVehicleConfigNode(this: Node, def: VehicleConfigDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, spec, def.device, async (msg, client, signal) => {
      const { channel: channelOverride, ...change } = payloadFields(msg.payload) ?? {};
      const channelValue = channelOverride ?? def.channel;
      const channel = channelValue === undefined || channelValue === '' ? undefined : checkChannel(channelValue);
      const changing = Object.keys(change).length > 0;
      msg.payload = changing ? await setVehicleConfig(client, change, { channel, signal }) : await getVehicleConfig(client, { channel, signal });
      return vehicleConfig(changing);
    }, def);
  }
  RED.nodes.registerType(spec.type, IpcamVehicleConfigNode as (this: never, def: never) => void);
};
