import { pulseRelay, readRelay, relayCommand, runRelaySequence, setRelay } from '../../lib/ops/relay';
import { relayDone } from '../../lib/status/status';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import type { NodeAPI } from '../red';

interface RelayDef extends ActionDef {
  output?: string | number;
  mode?: string;
  pulse?: string | number;
  sequence?: string;
  overrides?: string;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<RelayDef>(RED, spec, (_node, def) => async (msg, client, signal) => {
    // Checked whole before anything is sent: an unknown payload is EINPUT, never Mode.
    const r = relayCommand(msg.payload, def);
    const state =
      r.mode === 'check'
        ? await readRelay(client, r.output, signal)
        : r.mode === 'pulse'
          ? await pulseRelay(client, r.output, r.pulse, signal)
          : r.mode === 'sequence'
            ? await runRelaySequence(client, r.output, r.sequence, signal)
            : await setRelay(client, r.output, r.mode === 'on', signal);
    msg.payload = state;
    return relayDone(state.output, state.active, r.mode === 'pulse');
  });
};
