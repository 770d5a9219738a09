import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { checkDuration, TimedMoves, type MoveEnd, type MoveOptions } from './ptz-timed-moves';
import type { DeviceClient } from '../transport/client';
import { runOp } from './runner';
import { checkChannel, checkSpeed, DEFAULT_SPEED_RANGE, PTZ_ACTIONS, ptzAction, ptzControl, speedRange, type PtzAction } from './ptz-xml';
import { checkXmlPreset, ptzPresetOp, XML_PRESET_NAME_MAX, XML_PTZ_COMMANDS, xmlCruiseId, type PtzListEntry, type XmlPtzCommand } from './ptz-presets';

export { XML_PTZ_COMMANDS, type XmlPtzCommand } from './ptz-presets';

export interface PtzMove {
  action: unknown;
  speed?: unknown;
  /** ms after which a Stop follows; 0 = until Stop. */
  duration?: unknown;
  channel?: unknown;
  /** Preset commands: an id (1-360) or a name (at most 10 characters); savePreset takes a name. */
  preset?: unknown;
  /** startTour: the cruise id; stopTour needs none (the channel's cruise stops). */
  tour?: unknown;
  /** CGI only (savePreset as home): refused here. */
  home?: unknown;
}

/** What a command gave: `{ action, ok: true }`, and the list for `listPresets` / `listTours`. */
export interface PtzOutcome {
  action: PtzAction | XmlPtzCommand;
  ok: true;
  list?: PtzListEntry[];
}

function commandOf(value: unknown): XmlPtzCommand | undefined {
  const wanted = typeof value === 'string' && value.length <= 32 ? value.trim() : undefined;
  return XML_PTZ_COMMANDS.find((c) => c === wanted);
}

/**
 * PtzControl (XML) with timed moves: a move with a duration is followed by exactly one Stop.
 * Presets and cruises: going to a preset or starting a cruise takes over the channel's motion
 * (its pending Stop no longer applies); saving, removing, listing and stopping a cruise move nothing.
 */
export class PtzMover extends TimedMoves {
  /**
   * Sends one command. A timed move answers when the camera has taken it, or with
   * `untilEnded`, once it has ended: its Stop answered (a Stop that failed is the error then), or
   * another command took the camera over first.
   */
  async move(request: PtzMove, signal?: AbortSignal, options: MoveOptions = {}): Promise<PtzOutcome> {
    // The caps lookup comes before the command: close waits for it too (not for the move's end).
    const { outcome, end } = await this.track(() => this.moveNow(request, signal));
    await this.untilEnded(end, options);
    return outcome;
  }

  private async moveNow(request: PtzMove, signal?: AbortSignal): Promise<{ outcome: PtzOutcome; end?: MoveEnd }> {
    const command = commandOf(request.action);
    if (command) return { outcome: await this.presetCommand(command, request, signal) };
    let action: PtzAction;
    try {
      action = ptzAction(request.action);
    } catch {
      throw inputError(`Unknown PTZ action ${echo(request.action)}: use one of ${[...PTZ_ACTIONS, ...XML_PTZ_COMMANDS].join(', ')}`);
    }
    const channel = checkChannel(request.channel);
    const duration = checkDuration(request.duration);
    const speedInput = request.speed === undefined || request.speed === '' ? undefined : request.speed;
    // The interface allows 1-8 (spec section 8): checked before any request; the device's caps may narrow it.
    if (speedInput !== undefined) checkSpeed(speedInput, DEFAULT_SPEED_RANGE);
    const range = await speedRange(this.client, channel);
    const speed = speedInput === undefined ? Math.min(range.max, Math.max(range.min, 4)) : checkSpeed(speedInput, range);
    const key = String(channel);
    const stop = action === 'Stop' ? undefined : (via: DeviceClient): Promise<void> => ptzControl(via, 'Stop', speed, channel);
    const { end } = await this.command(key, stop, duration, () => ptzControl(this.client, action, speed, channel, signal));
    return { outcome: { action, ok: true }, ...(end && { end }) };
  }

  private async presetCommand(action: XmlPtzCommand, request: PtzMove, signal?: AbortSignal): Promise<PtzOutcome> {
    // Everything is checked before the first request.
    const channel = checkChannel(request.channel);
    checkDuration(request.duration);
    if (request.home !== undefined && request.home !== false) throw inputError('home (a preset as home position) is for the CGI interface only');
    const send = (command: XmlPtzCommand, fields: { id?: number; name?: string; tour?: number } = {}): Promise<PtzListEntry[] | undefined> =>
      runOp(this.client, ptzPresetOp, { command, channel, ...fields }, { signal });
    const key = String(channel);
    switch (action) {
      case 'gotoPreset': {
        const preset = checkXmlPreset(request.preset);
        const id = typeof preset === 'number' ? preset : await this.presetId(channel, preset, signal);
        await this.command(key, undefined, 0, () => send(action, { id }));
        break;
      }
      case 'removePreset': {
        const preset = checkXmlPreset(request.preset);
        const id = typeof preset === 'number' ? preset : await this.presetId(channel, preset, signal);
        await send(action, { id });
        break;
      }
      case 'savePreset': {
        const preset = checkXmlPreset(request.preset);
        if (typeof preset === 'number') throw inputError(`XML presets are saved by name (at most ${XML_PRESET_NAME_MAX} characters); the device picks the id`);
        await send(action, { name: preset });
        break;
      }
      case 'startTour': {
        const tour = xmlCruiseId.parse(request.tour, 'Tour');
        await this.command(key, undefined, 0, () => send(action, { tour }));
        break;
      }
      case 'stopTour':
        // PtzStopCruise stops whatever cruise runs on the channel: a tour named is checked, not sent.
        if (request.tour !== undefined && request.tour !== null && request.tour !== '') xmlCruiseId.parse(request.tour, 'Tour');
        await send(action);
        break;
      case 'listPresets':
      case 'listTours':
        return { action, ok: true, list: (await send(action)) ?? [] };
    }
    return { action, ok: true };
  }

  /** The id of the preset named `name` on `channel` (PtzGetPresets); EDEVICE when there is none. */
  private async presetId(channel: number, name: string, signal?: AbortSignal): Promise<number> {
    const list = (await runOp(this.client, ptzPresetOp, { command: 'listPresets', channel }, { signal })) ?? [];
    const found = list.find((p) => p.name === name);
    if (!found) throw new IpcamError('EDEVICE', `The device has no preset named ${echo(name)} on channel ${channel}`, { deviceCode: 20 });
    return found.id;
  }
}
