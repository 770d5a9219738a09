import { IpcamError, inputError } from '../errors';
import type { DeviceClient } from '../transport/client';
import { buildCgiPath } from './codec';
import { checkIo } from './io';

/** Output action characters: `/` active, `\` inactive (sent as `%5C`). */
const ACTIVE = '/';
const INACTIVE = '\\';
/** Every wait is followed by an action character: a trailing wait is not part of the syntax. */
const SEQUENCE = /^(\d*):([/\\])((\d+)[/\\])*$/;

export interface RelayState {
  output: number;
  active: boolean;
}

export function checkOutput(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 99) throw inputError(`Output must be a relay number from 1, got ${JSON.stringify(value)}`);
  return n;
}

export function checkPulse(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 3_600_000) throw inputError(`Pulse must be a whole number of ms from 1 to 3600000, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * A full action `[<id>]:<a>[<wait><a>...]`, checked character by character before sending; the
 * relay of the sequence (if it names one) must be the one asked for. Returns the action text and
 * the state the relay ends in.
 */
export function checkSequence(value: unknown, output: number): { action: string; output: number; finalActive: boolean } {
  if (typeof value !== 'string' || value.trim() === '') throw inputError('A relay sequence is text like 1:/300\\500/300\\');
  const text = value.trim();
  const bad = /[^0-9:/\\]/.exec(text);
  if (bad) throw inputError(`Relay sequence has an unknown character ${JSON.stringify(bad[0])}: use digits, ':', '/' and '\\'`);
  const match = SEQUENCE.exec(text);
  if (!match) throw inputError(`Relay sequence ${JSON.stringify(text)} is not [id]:<a>[<wait><a>...] (a = / or \\, waits in ms)`);
  const id = match[1] === '' ? output : Number(match[1]);
  if (id !== output) throw inputError(`Relay sequence names output ${id} but output ${output} is asked for (one relay per request)`);
  const actions = text.replace(/[^/\\]/g, '');
  return { action: `${id}:${text.slice(text.indexOf(':') + 1)}`, output: id, finalActive: actions.endsWith(ACTIVE) };
}

async function sendAction(client: DeviceClient, action: string, signal?: AbortSignal): Promise<void> {
  await client.request({ path: buildCgiPath('/cgi-bin/admin/output', { action }), signal });
}

export async function setRelay(client: DeviceClient, output: number, active: boolean, signal?: AbortSignal): Promise<RelayState> {
  await sendAction(client, `${checkOutput(output)}:${active ? ACTIVE : INACTIVE}`, signal);
  return { output, active };
}

/** Active for `ms`, then inactive; the answer is the state it ends in. */
export async function pulseRelay(client: DeviceClient, output: number, ms: unknown, signal?: AbortSignal): Promise<RelayState> {
  await sendAction(client, `${checkOutput(output)}:${ACTIVE}${checkPulse(ms)}${INACTIVE}`, signal);
  return { output, active: false };
}

export async function runRelaySequence(client: DeviceClient, output: number, sequence: unknown, signal?: AbortSignal): Promise<RelayState> {
  const checked = checkSequence(sequence, checkOutput(output));
  await sendAction(client, checked.action, signal);
  return { output: checked.output, active: checked.finalActive };
}

export async function readRelay(client: DeviceClient, output: number, signal?: AbortSignal): Promise<RelayState> {
  const states = await checkIo(client, 'output', [checkOutput(output)], signal);
  const state = states.find((s) => s.port === output) ?? (states.length === 1 ? states[0] : undefined);
  if (!state) throw new IpcamError('EPARSE', `The output check did not mention output ${output}`);
  return { output, active: state.active };
}
