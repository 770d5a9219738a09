import { defineAction } from '../../lib/node-spec';
import { OVERRIDES, payloadFields } from '../../lib/input/payload';
import { getVehicleConfig, setVehicleConfig } from '../../lib/ops/vehicle-config';
import { CHANNEL_SETTING } from '../../lib/xml/channel';
import { vehicleConfig, ACTION_WORDS } from '../../lib/status/status';

export const spec = defineAction({
  type: 'ipcam-vehicle-config',
  settings: { channel: CHANNEL_SETTING, overrides: OVERRIDES },
  status: ['vehicleConfig', ...ACTION_WORDS],
  input(payload, s) {
    const { channel, ...change } = payloadFields(payload) ?? {};
    // A message's channel is checked by the operation's entry, before anything is sent.
    return { channel: channel === undefined || channel === '' ? s.channel : channel, change: Object.keys(change).length > 0 ? change : undefined };
  },
  run: (client, { channel, change }, { signal }) => (change ? setVehicleConfig(client, change, { channel, signal }) : getVehicleConfig(client, { channel, signal })),
  output: (config, { change }) => ({ payload: config, status: vehicleConfig(change !== undefined) }),
});
