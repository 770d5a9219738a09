/**
 * Commands from the broker. Whoever can publish on the broker can send them, so each is read as
 * a stranger's message: its size first, then its topic against the settings, then its payload
 * exactly; only what the settings name is a command, anything else is a reason to ignore it.
 * A flood of them costs a few comparisons each: the reason's text is only made when it is told.
 */
import { IpcamError } from '../errors/errors';
import { echo } from '../errors/echo';
import { checkPlate, type CheckedPlate } from '../ops/plate-input';
import { HA_OFF, HA_ON, HA_PRESS } from './discovery';
import type { HaSettings } from './settings';
import type { HaTopics } from './topics';

/** A command payload longer than this is not read at all (a plate is at most 32 characters). */
export const MAX_COMMAND_BYTES = 256;

export type HaCommand =
  | { kind: 'switch'; output: number; on: boolean }
  | { kind: 'pulse'; output: number }
  | { kind: 'plate-add' | 'plate-delete'; plate: CheckedPlate };

/** A command, or why it is ignored: `kind` a fixed word (the warnings' kind), `reason` the text, made on demand. */
export type ParsedCommand = { ok: true; command: HaCommand } | { ok: false; kind: 'size' | 'topic' | 'relay' | 'payload' | 'plates' | 'plate'; reason: () => string };

const ON = Buffer.from(HA_ON);
const OFF = Buffer.from(HA_OFF);
const PRESS = Buffer.from(HA_PRESS);
const RELAY = /^relay_([1-9][0-9]{0,2})(_pulse)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads one message of the command topics (`<root>/<component>/set`); nothing about it is trusted. */
export function parseCommand(t: HaTopics, s: HaSettings, topic: string, payload: Buffer): ParsedCommand {
  if (payload.length > MAX_COMMAND_BYTES) return { ok: false, kind: 'size', reason: () => `a command of ${payload.length} bytes (at most ${MAX_COMMAND_BYTES})` };
  const key = topic.length <= t.root.length + 40 && topic.startsWith(`${t.root}/`) && topic.endsWith('/set') ? topic.slice(t.root.length + 1, -4) : undefined;
  if (key === undefined) return { ok: false, kind: 'topic', reason: () => `a message on ${echo(topic, 80)}` };
  const relay = RELAY.exec(key);
  if (relay) {
    const output = Number(relay[1]);
    const pulse = relay[2] !== undefined;
    if (!s.relays.includes(output)) return { ok: false, kind: 'relay', reason: () => `a command for relay ${output}, which is not in Relays (${s.relays.join(',') || 'none'})` };
    if (pulse) return payload.equals(PRESS) ? { ok: true, command: { kind: 'pulse', output } } : { ok: false, kind: 'payload', reason: () => `${shown(payload)} to pulse relay ${output} (only ${HA_PRESS})` };
    if (payload.equals(ON) || payload.equals(OFF)) return { ok: true, command: { kind: 'switch', output, on: payload.equals(ON) } };
    return { ok: false, kind: 'payload', reason: () => `${shown(payload)} for relay ${output} (only ${HA_ON} or ${HA_OFF})` };
  }
  if (key === 'plate_add' || key === 'plate_delete') {
    if (s.plates === undefined) return { ok: false, kind: 'plates', reason: () => 'a plate change: no plate group is set' };
    let text: string;
    try {
      text = UTF8.decode(payload);
    } catch {
      return { ok: false, kind: 'plate', reason: () => 'a plate that is not UTF-8 text' };
    }
    try {
      // The plate rules of plate-add and plate-delete, in the group of the settings only.
      return { ok: true, command: { kind: key === 'plate_add' ? 'plate-add' : 'plate-delete', plate: checkPlate(text.trim(), s.plates) } };
    } catch (err) {
      const message = err instanceof IpcamError ? err.message : 'not a plate';
      return { ok: false, kind: 'plate', reason: () => message };
    }
  }
  return { ok: false, kind: 'topic', reason: () => `a command for ${echo(key, 40)}, which is no entity of this camera` };
}

function shown(payload: Buffer): string {
  return echo(payload.toString('utf8'), 16);
}
