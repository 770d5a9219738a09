import { inputError } from '../lib/errors';
import { checkOutput, pulseRelay, readRelay, runRelaySequence, setRelay } from '../lib/cgi/relay';
import { handleInput, payloadObject } from './action';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './red';

interface RelayDef extends NodeDef {
  device?: string;
  output?: string | number;
  mode?: string;
  pulse?: string | number;
  sequence?: string;
}

type Mode = 'on' | 'off' | 'pulse' | 'sequence' | 'check';
const MODES: readonly string[] = ['on', 'off', 'pulse', 'sequence', 'check'];

/** `true`/`false`/`'pulse'`/`'check'`, `{ output, state, pulse, sequence }`, or the settings. */
function request(def: RelayDef, msg: NodeMessage): { mode: Mode; output: number; pulse: unknown; sequence: unknown } {
  const p = msg.payload;
  const fields = payloadObject(msg) ?? {};
  let mode = (def.mode || 'on') as string;
  if (p === true || p === false) mode = p ? 'on' : 'off';
  else if (typeof p === 'string' && MODES.includes(p.trim().toLowerCase())) mode = p.trim().toLowerCase();
  else if (typeof fields['state'] === 'boolean') mode = fields['state'] ? 'on' : 'off';
  else if (fields['sequence'] !== undefined) mode = 'sequence';
  else if (fields['pulse'] !== undefined) mode = 'pulse';
  else if (typeof fields['state'] === 'string' && MODES.includes(fields['state'])) mode = fields['state'];
  if (!MODES.includes(mode)) throw inputError(`Unknown relay mode "${mode}": use on, off, pulse, sequence or check`);
  // A blank output setting (the editor allows it) means relay 1.
  const output = typeof def.output === 'string' && def.output.trim() === '' ? undefined : def.output;
  return { mode: mode as Mode, output: checkOutput(fields['output'] ?? output ?? 1), pulse: fields['pulse'] ?? def.pulse, sequence: fields['sequence'] ?? def.sequence };
}

export = function register(RED: NodeAPI): void {
  function IpcamRelayNode(this: Node, def: RelayDef): void {
    RED.nodes.createNode(this, def);
    handleInput(RED, this, def.device, async (msg, client, signal) => {
      const r = request(def, msg);
      const state =
        r.mode === 'check'
          ? await readRelay(client, r.output, signal)
          : r.mode === 'pulse'
            ? await pulseRelay(client, r.output, r.pulse, signal)
            : r.mode === 'sequence'
              ? await runRelaySequence(client, r.output, r.sequence, signal)
              : await setRelay(client, r.output, r.mode === 'on', signal);
      msg.payload = state;
      return { fill: state.active ? 'green' : 'grey', shape: 'dot', text: `relay ${state.output} ${r.mode === 'pulse' ? 'pulsed' : state.active ? 'on' : 'off'}` };
    });
  }
  RED.nodes.registerType('ipcam-relay', IpcamRelayNode as (this: never, def: never) => void);
};
