import { defineAction } from '../../lib/node-spec';
import { RELAY_SETTINGS, relayCommand, runRelay } from '../../lib/ops/relay';
import { OVERRIDES } from '../../lib/input/payload';
import { relayDone, ACTION_WORDS } from '../../lib/status/status';

export const spec = defineAction({
  type: 'ipcam-relay',
  settings: { ...RELAY_SETTINGS, overrides: OVERRIDES },
  payloadKeys: ['output', 'state', 'pulse', 'sequence'],
  status: ['relayOn', 'relayOff', ...ACTION_WORDS],
  // Read whole before anything is sent: a payload that is no relay command is EINPUT, never Mode.
  input: (payload, settings) => relayCommand(payload, settings),
  run: (client, command, { signal }) => runRelay(client, command, signal),
  output: (state, command) => ({ payload: state, status: relayDone(state.output, state.active, command.mode === 'pulse') }),
});
