import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { NONE_HINT, payloadFields } from '../input/payload';
import { didYouMean } from '../input/suggest';
import { bool, checkWhole, int, oneOf, shape, text, withDefault, type Param } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { checkIo } from './io';
import { runOp } from './runner';
import { defineOp, type OpRequest, type Operation } from './types';

/** Output action characters: `/` active, `\` inactive (sent as `%5C`). */
const ACTIVE = '/';
const INACTIVE = '\\';
/**
 * `[relay]:<a>[<wait><a>...]`: a = `/` (active) or `\` (inactive), waits in ms. Every wait is
 * followed by an action character: a trailing wait is not part of the syntax.
 */
export const SEQUENCE = /^(\d*):([/\\])((\d+)[/\\])*$/;
/** Relay numbers this node accepts. */
export const OUTPUT_MAX = 99;
/** Longest pulse and longest wait of a sequence (ms). */
export const PULSE_MAX = 3_600_000;
/** Longest sequence text: the spec gives none; 256 characters hold dozens of steps. */
export const SEQUENCE_MAX = 256;

export interface RelayState {
  output: number;
  active: boolean;
  /** A pulse: how long the relay was active (ms). */
  pulse?: number;
  /** A sequence: the action sent (`[relay]:<a>[<wait><a>...]`). */
  sequence?: string;
}

/** What a relay node does with a message: Mode of its settings and the payload's override. */
export const RELAY_MODES = ['on', 'off', 'pulse', 'sequence', 'check'] as const;
export type RelayMode = (typeof RELAY_MODES)[number];

/**
 * The short forms, exactly: booleans, the numbers 1 / 0 and these strings (any case, trimmed),
 * which is what MQTT, HTTP-in and dashboard switches deliver. A gate must never act on anything
 * else, so there is no fallback to Mode for unknown values. The README and the node's help name
 * this list; it is the only place that decides.
 */
type ShortMode = Exclude<RelayMode, 'sequence'>;
export const RELAY_SHORT_STRINGS: ReadonlyMap<string, ShortMode> = new Map<string, ShortMode>([
  ['true', 'on'],
  ['false', 'off'],
  ['on', 'on'],
  ['off', 'off'],
  ['1', 'on'],
  ['0', 'off'],
  ['pulse', 'pulse'],
  ['check', 'check'],
]);
const SHORT_FORMS_TEXT = `true / false, 1 / 0, or the text ${[...RELAY_SHORT_STRINGS.keys()].map((w) => `"${w}"`).join(', ')}`;

export interface RelaySettings {
  mode?: unknown;
  output?: unknown;
  pulse?: unknown;
  sequence?: unknown;
}

/**
 * What a relay message asks: its mode, and the relay, pulse and sequence as given, each checked
 * once, by the operation that sends it (runRelay), before anything is sent.
 */
export interface RelayCommand {
  mode: RelayMode;
  output: unknown;
  pulse: unknown;
  sequence: unknown;
}

/** The mode a short form names; undefined for anything that is not one of them. */
export function relayShortForm(value: unknown): ShortMode | undefined {
  if (value === true || value === 1) return 'on';
  if (value === false || value === 0) return 'off';
  return typeof value === 'string' ? RELAY_SHORT_STRINGS.get(value.trim().toLowerCase()) : undefined;
}

/**
 * A message for a relay: absent payload (undefined / null) = Mode of the settings; a short form;
 * or `{ output, state, pulse, sequence }` (`state`: a short form or `'sequence'`; without it,
 * `sequence` or `pulse` choose that mode, else Mode). Anything else is `EINPUT`: nothing is sent.
 */
export function relayCommand(payload: unknown, settings: RelaySettings = {}): RelayCommand {
  const fields = payloadFields(payload);
  let mode: unknown = settings.mode === undefined || settings.mode === '' ? 'on' : settings.mode;
  if (fields) {
    const state = fields['state'];
    if (state !== undefined) mode = state === 'sequence' ? 'sequence' : relayShortForm(state) ?? refuse(state, 'state');
    else if (fields['sequence'] !== undefined) mode = 'sequence';
    else if (fields['pulse'] !== undefined) mode = 'pulse';
  } else if (payload !== undefined && payload !== null) {
    mode = relayShortForm(payload) ?? refuse(payload, 'payload');
  }
  if (!RELAY_MODES.includes(mode as RelayMode)) throw inputError(`Unknown relay mode ${echo(mode)}: use ${RELAY_MODES.join(', ')}`);
  // A blank output setting (the editor allows it) means relay 1.
  const setting = typeof settings.output === 'string' && settings.output.trim() === '' ? undefined : settings.output;
  return {
    mode: mode as RelayMode,
    output: fields?.['output'] ?? setting ?? 1,
    pulse: fields?.['pulse'] ?? settings.pulse,
    sequence: fields?.['sequence'] ?? settings.sequence,
  };
}

function refuse(value: unknown, what: 'payload' | 'state'): never {
  const form = what === 'state' ? `${SHORT_FORMS_TEXT} or "sequence"` : `${SHORT_FORMS_TEXT}, or { output, state, pulse, sequence }`;
  const words = what === 'state' ? [...RELAY_SHORT_STRINGS.keys(), 'sequence'] : [...RELAY_SHORT_STRINGS.keys()];
  // A whole payload the relay cannot read is most often not meant for it (an Inject's timestamp):
  // say how to run the node as set, as the foreign keys do (a slip has its word offered).
  const near = didYouMean(value, words);
  const hint = what === 'payload' && near === '' ? NONE_HINT : '';
  throw inputError(`Relay ${what} ${echo(value)}${near} is not a relay command: use ${form}${hint}; nothing was sent`, `${what} ${echo(value, 16)}`);
}

/** The settings of a relay node; the checks below use them, the editor's rules are their limits. */
export const RELAY_SETTINGS = {
  output: withDefault(int({ min: 1, max: OUTPUT_MAX }), 1),
  mode: oneOf(RELAY_MODES),
  pulse: int({ min: 1, max: PULSE_MAX }),
  sequence: text({ max: SEQUENCE_MAX, pattern: SEQUENCE, patternText: '[relay]: then / or \\, each wait followed by / or \\ (e.g. 1:/300\\500/300\\)' }),
};

export function checkOutput(value: unknown): number {
  return RELAY_SETTINGS.output.parse(value, 'Output (the relay number)');
}

export function checkPulse(value: unknown): number {
  return RELAY_SETTINGS.pulse.parse(value, 'Pulse (ms)');
}

/** A relay sequence checked whole: the action sent, its relay and the state it ends in. */
export interface CheckedSequence {
  action: string;
  output: number;
  finalActive: boolean;
}

/**
 * A full action `[<id>]:<a>[<wait><a>...]`, checked character by character before sending; the
 * relay of the sequence (if it names one) must be the one asked for. Returns the action text and
 * the state the relay ends in.
 */
export function checkSequence(value: unknown, output: number): CheckedSequence {
  if (typeof value !== 'string' || value.trim() === '') throw inputError('A relay sequence is text like 1:/300\\500/300\\');
  if (value.length > SEQUENCE_MAX) throw inputError(`A relay sequence must be at most ${SEQUENCE_MAX} characters, got ${value.length}`);
  const text = value.trim();
  const bad = /[^0-9:/\\]/.exec(text);
  if (bad) throw inputError(`Relay sequence has an unknown character ${echo(bad[0])}: use digits, ':', '/' and '\\'`);
  const match = SEQUENCE.exec(text);
  if (!match) throw inputError(`Relay sequence ${echo(text)} is not [id]:<a>[<wait><a>...] (a = / or \\, waits in ms)`);
  const id = match[1] === '' ? output : checkWhole(match[1], 'The relay number of the sequence', 1, OUTPUT_MAX);
  if (id !== output) throw inputError(`Relay sequence names output ${id} but output ${output} is asked for (one relay per request)`);
  for (const wait of text.slice(text.indexOf(':') + 1).match(/\d+/g) ?? []) checkWhole(wait, 'A wait of the relay sequence (ms)', 0, PULSE_MAX);
  const actions = text.replace(/[^/\\]/g, '');
  return { action: `${id}:${text.slice(text.indexOf(':') + 1)}`, output: id, finalActive: actions.endsWith(ACTIVE) };
}

/** Spec 4.4: `output?action=...`, on the control lane. */
const OUTPUT_PATH = '/cgi-bin/admin/output';

function outputAction(action: string, repeatable = false): OpRequest {
  // A refusal comes as HTTP 200 with `# Error: Error setting output`: EDEVICE, never a success.
  return { path: OUTPUT_PATH, query: { action }, control: true, what: 'relay command', ...(repeatable && { repeatable }) };
}

/** The relay's own checks (their messages name the node's settings), as parameters of the operations. */
const outputParam: Param<number> = { limits: RELAY_SETTINGS.output.limits, parse: (value) => checkOutput(value) };
const pulseParam: Param<number> = { limits: RELAY_SETTINGS.pulse.limits, parse: (value) => checkPulse(value) };
/** Checked whole with the relay it names by `checkSequence` (see `sequenceCommand`). */
const sequenceParam: Param<unknown> = { limits: RELAY_SETTINGS.sequence.limits, parse: (value) => value };
const sequenceFields = shape({ output: outputParam, sequence: sequenceParam });
/** The output and its sequence, checked together and once: the sequence may name its relay. */
const sequenceCommand: Param<CheckedSequence> = {
  limits: sequenceFields.limits,
  parse(value, field) {
    const p = sequenceFields.parse(value, field);
    return checkSequence(p.sequence, p.output);
  },
};

export const relaySwitch = defineOp({
  name: 'relaySwitch',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Switches an output relay on or off',
  params: shape({ output: outputParam, active: bool() }),
  // On or off twice is on or off: safe to send again. A pulse or a sequence twice is two (the default).
  request: (p) => outputAction(`${p.output}:${p.active ? ACTIVE : INACTIVE}`, true),
  parse: (_answer, p): { payload: RelayState } => ({ payload: { output: p.output, active: p.active } }),
});

/** Active for `pulse` ms, then inactive; the answer is the state it ends in and the pulse. */
export const relayPulse = defineOp({
  name: 'relayPulse',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Pulses an output relay: active for the pulse (ms), then inactive',
  params: shape({ output: outputParam, pulse: pulseParam }),
  request: (p) => outputAction(`${p.output}:${ACTIVE}${p.pulse}${INACTIVE}`),
  parse: (_answer, p): { payload: RelayState } => ({ payload: { output: p.output, active: false, pulse: p.pulse } }),
});

export const relaySequence = defineOp({
  name: 'relaySequence',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Plays a sequence of actions and waits on an output relay',
  params: sequenceCommand,
  request: (s) => outputAction(s.action),
  parse: (_answer, s): { payload: RelayState } => ({ payload: { output: s.output, active: s.finalActive, sequence: s.action } }),
});

/** The relay calls of ipcam-relay, run by the one runner; not offered by ipcam-request. The check is `ioCheck` (lib/ops/io). */
export const RELAY_OPERATIONS: readonly Operation[] = [relaySwitch, relayPulse, relaySequence];

/** A relay command run: its relay, pulse or sequence checked by the one operation that sends it. */
export function runRelay(client: DeviceClient, command: RelayCommand, signal?: AbortSignal): Promise<RelayState> {
  switch (command.mode) {
    case 'check':
      return readRelay(client, command.output, signal);
    case 'pulse':
      return runOp(client, relayPulse, { output: command.output, pulse: command.pulse }, { signal });
    case 'sequence':
      return runOp(client, relaySequence, { output: command.output, sequence: command.sequence }, { signal });
    default:
      return runOp(client, relaySwitch, { output: command.output, active: command.mode === 'on' }, { signal });
  }
}

export function setRelay(client: DeviceClient, output: number, active: boolean, signal?: AbortSignal): Promise<RelayState> {
  return runOp(client, relaySwitch, { output, active }, { signal });
}

/** Active for `ms`, then inactive; the answer is the state it ends in. */
export function pulseRelay(client: DeviceClient, output: number, ms: unknown, signal?: AbortSignal): Promise<RelayState> {
  return runOp(client, relayPulse, { output, pulse: ms }, { signal });
}

export function runRelaySequence(client: DeviceClient, output: number, sequence: unknown, signal?: AbortSignal): Promise<RelayState> {
  return runOp(client, relaySequence, { output, sequence }, { signal });
}

export async function readRelay(client: DeviceClient, relay: unknown, signal?: AbortSignal): Promise<RelayState> {
  const output = checkOutput(relay);
  const states = await checkIo(client, 'output', [output], signal);
  const state = states.find((s) => s.port === output) ?? (states.length === 1 ? states[0] : undefined);
  if (!state) throw new IpcamError('EPARSE', `The output check did not mention output ${output}`);
  return { output, active: state.active };
}
