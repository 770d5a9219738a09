import { inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { checkText, checkWhole, type Param } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { checkDuration, TimedMoves, type MoveEnd, type MoveOptions } from './ptz-timed-moves';
import { buildCgiPath, type CgiValue } from '../cgi/codec';
import { runOp } from './runner';
import { defineOp, type Operation } from './types';

export const CGI_MOVES = ['home', 'up', 'down', 'left', 'right', 'upleft', 'upright', 'downleft', 'downright', 'stop', 'reset'] as const;
export type CgiMove = (typeof CGI_MOVES)[number];
/** The moves that go on until `move=stop` when sent with `move=repeat` (spec 4.5). */
export const CGI_DIRECTIONS: readonly CgiMove[] = ['up', 'down', 'left', 'right', 'upleft', 'upright', 'downleft', 'downright'];

/** A PTZ command of the CGI interface (`ptzset` and `ptzconfig`). */
export type CgiPtzCommand =
  | { action: 'move'; move: CgiMove; continuous?: boolean; stream?: number }
  | { action: 'gotoPreset'; preset: number | string; stream?: number }
  | { action: 'savePreset'; preset: number | string; home?: boolean; stream?: number }
  | { action: 'removePreset'; preset: number | string; stream?: number }
  | { action: 'removeAllPresets'; stream?: number }
  | { action: 'startTour'; tour: number; stream?: number }
  | { action: 'stopTour'; tour: number; stream?: number };

export const CGI_PTZ_ACTIONS = ['move', 'gotoPreset', 'savePreset', 'removePreset', 'removeAllPresets', 'startTour', 'stopTour', ...CGI_MOVES] as const;

/** Spec 2 and 8: preset numbers 0-31, names of at most 31 characters without `~`. */
export const PRESET_MAX = 31;
export const PRESET_NAME_MAX = 31;
export const PRESET_NAME_FORBIDDEN = '~';
/** Spec 8: tours 0-3. */
export const TOUR_MAX = 3;
/** Electronic PTZ view area index: the spec gives no bound; no device has this many view areas. */
export const STREAM_MAX = 99;
/** Longest action or move name: anything longer is none of them (never lower-cased whole). */
const NAME_MAX = 32;

/** Presets are numbers 0-31 or names of at most 31 characters without `~` or control characters. */
export function checkPreset(value: unknown): number | string {
  if (typeof value === 'number' || (typeof value === 'string' && /^\s*\d{1,16}\s*$/.test(value))) return checkWhole(value, 'Preset number', 0, PRESET_MAX);
  if (typeof value !== 'string') throw inputError(`Preset must be a number 0-${PRESET_MAX} or a name, got ${echo(value)}`);
  return checkText(value, { what: 'Preset name', max: PRESET_NAME_MAX, forbid: PRESET_NAME_FORBIDDEN });
}

export function checkTour(value: unknown): number {
  return checkWhole(value, 'Tour', 0, TOUR_MAX);
}

function checkStream(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return checkWhole(value, 'stream', 0, STREAM_MAX);
}

/** The known name `value` spells (any case, trimmed), or undefined; long text is no name. */
function named<T extends string>(names: readonly T[], value: unknown): T | undefined {
  if (typeof value !== 'string' || value.length > NAME_MAX) return undefined;
  const wanted = value.trim().toLowerCase();
  return names.find((n) => n.toLowerCase() === wanted);
}

/** Checks a command (object or short form like `'left'`) before anything is sent. */
export function checkCgiPtz(input: unknown): CgiPtzCommand {
  const fields = (typeof input === 'object' && input !== null ? input : { action: input }) as Record<string, unknown>;
  const stream = checkStream(fields['stream']);
  const withStream = <T extends object>(c: T): T => (stream === undefined ? c : { ...c, stream });
  // Only a direction continues (`move=repeat`); home, stop and reset are single commands.
  const moveOf = (m: CgiMove): CgiPtzCommand => withStream({ action: 'move', move: m, continuous: fields['continuous'] === true && CGI_DIRECTIONS.includes(m) });
  const move = named(CGI_MOVES, fields['action']);
  if (move) return moveOf(move);
  // Commands are spelled exactly (spaces around allowed); moves in any case.
  const action = typeof fields['action'] === 'string' && fields['action'].length <= NAME_MAX ? fields['action'].trim() : undefined;
  switch (action) {
    case 'move': {
      const m = named(CGI_MOVES, fields['move']);
      if (!m) throw inputError(`Unknown move ${echo(fields['move'])}: use ${CGI_MOVES.join(', ')}`);
      return moveOf(m);
    }
    case 'gotoPreset':
    case 'removePreset':
      return withStream({ action, preset: checkPreset(fields['preset']) });
    case 'savePreset':
      return withStream({ action, preset: checkPreset(fields['preset']), home: fields['home'] === true });
    case 'removeAllPresets':
      return withStream({ action });
    case 'startTour':
    case 'stopTour':
      return withStream({ action, tour: checkTour(fields['tour']) });
    case 'listPresets':
    case 'listTours':
      throw inputError(`${action} needs the XML interface: the CGI interface cannot list presets or tours`);
    default:
      throw inputError(`Unknown PTZ action ${echo(fields['action'])}: use ${CGI_PTZ_ACTIONS.join(', ')}`);
  }
}

/** The request target of a checked command; repeated `move` keys for continuous moves. */
export function cgiPtzPath(c: CgiPtzCommand): string {
  const stream: Array<[string, CgiValue | null]> = c.stream === undefined ? [] : [['stream', c.stream]];
  const byPreset = (prefix: string, preset: number | string): [string, CgiValue] => (typeof preset === 'number' ? [`${prefix}no`, preset] : [`${prefix}name`, preset]);
  switch (c.action) {
    case 'move':
      return buildCgiPath('/cgi-bin/operator/ptzset', [['move', c.move], ...(c.continuous ? ([['move', 'repeat']] as const) : []), ...stream]);
    case 'gotoPreset':
      return buildCgiPath('/cgi-bin/operator/ptzset', [byPreset('gotoserverpreset', c.preset), ...stream]);
    case 'startTour':
      return buildCgiPath('/cgi-bin/operator/ptzset', [['runservertourno', c.tour], ...stream]);
    case 'stopTour':
      return buildCgiPath('/cgi-bin/operator/ptzset', [['stopservertourno', c.tour], ...stream]);
    case 'savePreset':
      return buildCgiPath('/cgi-bin/operator/ptzconfig', [byPreset('setserverpreset', c.preset), ...(c.home ? ([['home', 'yes']] as const) : []), ...stream]);
    case 'removePreset':
      return buildCgiPath('/cgi-bin/operator/ptzconfig', [byPreset('removeserverpreset', c.preset), ...stream]);
    case 'removeAllPresets':
      return buildCgiPath('/cgi-bin/operator/ptzconfig', [['removeallpreset', null], ...stream]);
  }
}

/**
 * Sending it twice does what sending it once does: a stop, home, a preset gone to or saved (at
 * the same place, under the same number or name), a tour stopped, a move that lasts until stop.
 * Not a single step (twice is two steps), a reset, a preset removed (the second is refused) or
 * a tour started (it starts over).
 */
export function cgiPtzRepeatable(c: CgiPtzCommand): boolean {
  switch (c.action) {
    case 'move':
      return c.move === 'stop' || c.move === 'home' || c.continuous === true;
    case 'gotoPreset':
    case 'savePreset':
    case 'stopTour':
      return true;
    default:
      return false;
  }
}

/** A command as its parameter: `checkCgiPtz` (which takes its own checked commands back unchanged). */
const commandParam: Param<CgiPtzCommand> = { limits: { type: 'object', fields: {} }, parse: (value) => checkCgiPtz(value) };

/** Spec 4.5 and 8: one command of `ptzset` or `ptzconfig`, on the control lane. */
export const cgiPtzCommand = defineOp({
  name: 'cgiPtz',
  api: 'cgi',
  access: 'operator',
  class: 'change',
  summary: 'One PTZ command of the CGI interface (moves, presets, tours)',
  params: commandParam,
  request: (c) => ({ path: cgiPtzPath(c), control: true, what: 'PTZ command', ...(cgiPtzRepeatable(c) && { repeatable: true }) }),
  parse: (_answer, c) => ({ payload: c }),
});

/** The CGI PTZ calls of ipcam-ptz, run by the one runner; not offered by ipcam-request. */
export const CGI_PTZ_OPERATIONS: readonly Operation[] = [cgiPtzCommand];

/** A CGI PTZ command through the runner: `# Error:` in a 200 is EDEVICE, never a move reported done. */
async function sendPtz(client: DeviceClient, command: CgiPtzCommand, signal?: AbortSignal): Promise<void> {
  await runOp(client, cgiPtzCommand, command, { signal });
}

/** One command, one request; no timing (a `duration` is the business of `CgiPtzMover`). */
export async function cgiPtz(client: DeviceClient, input: unknown, signal?: AbortSignal): Promise<CgiPtzCommand> {
  const command = checkCgiPtz(input);
  await sendPtz(client, command, signal);
  return command;
}

/**
 * CGI PTZ with timed moves, by the same rules as the XML mover: a direction with a `duration`
 * (ms, 0-600000) is sent continuous (`move=repeat`) and followed by exactly one `move=stop`;
 * a command that takes over the motion of the same stream (a move, a preset, a tour) replaces
 * the pending stop; `close()` stops a camera this mover left moving (a continuous move).
 */
export class CgiPtzMover extends TimedMoves {
  /** Sends one command; with `untilEnded`, a timed move answers once its `move=stop` has been answered (see PtzMover.move). */
  async move(input: unknown, signal?: AbortSignal, options: MoveOptions = {}): Promise<CgiPtzCommand> {
    const { command, end } = await this.track(() => this.moveNow(input, signal));
    await this.untilEnded(end, options);
    return command;
  }

  private async moveNow(input: unknown, signal?: AbortSignal): Promise<{ command: CgiPtzCommand; end?: MoveEnd }> {
    const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    const duration = checkDuration(fields['duration']);
    const checked = checkCgiPtz(input);
    const timed = checked.action === 'move' && CGI_DIRECTIONS.includes(checked.move) && duration > 0;
    const command: CgiPtzCommand = timed ? { ...checked, continuous: true } : checked;
    if (!movesCamera(command)) {
      await sendPtz(this.client, command, signal);
      return { command };
    }
    const key = command.stream === undefined ? '' : String(command.stream);
    const stopCommand: CgiPtzCommand = { action: 'move', move: 'stop', ...(command.stream !== undefined && { stream: command.stream }) };
    const leftMoving = command.action === 'move' && command.continuous === true;
    const stop = leftMoving
      ? async (via: DeviceClient): Promise<void> => {
          await sendPtz(via, stopCommand);
        }
      : undefined;
    const { end } = await this.command(key, stop, timed ? duration : 0, () => sendPtz(this.client, command, signal));
    return { command, ...(end && { end }) };
  }
}

/**
 * Commands that take over the camera's motion (a move, a preset, a tour), ending a continuous
 * move. Stopping a tour and the `ptzconfig` commands (presets stored, removed) move nothing.
 */
function movesCamera(c: CgiPtzCommand): boolean {
  return c.action === 'move' || c.action === 'gotoPreset' || c.action === 'startTour';
}
