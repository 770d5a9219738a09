import { buildDocument, child, xml, type XmlNode } from '../xml/codec';
import { XML_CRUISE_ID, XML_PRESET_ID, XML_PRESET_NAME_MAX } from '../ops/ptz-presets';
import type { Route, SimContext } from './context';
import { sendRefusal, sendText, sendXml, sendXmlStatus, sendXmlSuccess, xmlBody } from './respond';

const ACTIONS = ['Up', 'Down', 'Left', 'Right', 'LeftUp', 'LeftDown', 'RightUp', 'RightDown', 'ZoomIn', 'ZoomOut', 'Near', 'Far', 'IrisOpen', 'IrisClose', 'Stop'];
const XML_PRESET_OPERATIONS = ['PtzGotoPreset', 'PtzAddPreset', 'PtzDeletePreset', 'PtzGetPresets', 'PtzGetCruises', 'PtzRunCruise', 'PtzStopCruise'];
const MOVES = ['home', 'up', 'down', 'left', 'right', 'upleft', 'upright', 'downleft', 'downright', 'repeat', 'stop', 'reset'];

export interface PtzCommand {
  api: 'xml' | 'cgi';
  channel: number;
  action: string;
  speed?: number;
  /** CGI `stream` (electronic PTZ view area), when the command named one. */
  stream?: number;
  time: number;
}

interface ChannelState {
  moving: boolean;
  action?: string;
  speed?: number;
}

/** PTZ of the simulated device: XML PtzControl/PtzGetCaps and CGI ptzset/ptzconfig. */
export class SimulatedPtz {
  /** Speed range reported by PtzGetCaps. */
  speedRange = { min: 1, max: 8 };
  /** Channels 1..channels exist (a recorder has several). */
  channels = 4;
  readonly state = new Map<number, ChannelState>();
  /** Presets by number (0-31) and by name, each with the position counter saved. */
  readonly presets = new Map<string, number>();
  readonly tours = new Set<number>();
  home: number | undefined;
  position = 0;
  /** PtzGetCaps `presetMaxCount`: XML presets per channel. */
  presetMaxCount = 255;
  /** XML presets by channel, then id: name and the position counter saved. */
  readonly xmlPresets = new Map<number, Map<number, { name: string; position: number }>>();
  /** XML cruises (tours) by channel: each has an id and a name; the device ships two. */
  readonly cruises = new Map<number, Array<{ id: number; name: string }>>();
  /** The cruise running on each channel. */
  readonly runningCruise = new Map<number, number>();
  readonly log: PtzCommand[] = [];

  channel(n: number): ChannelState {
    let s = this.state.get(n);
    if (!s) this.state.set(n, (s = { moving: false }));
    return s;
  }

  readonly route: Route = (ctx) => {
    const [, operation, ...rest] = ctx.path.split('/');
    if (operation === 'PtzGetCaps') return this.caps(ctx, rest);
    if (operation === 'PtzControl') return this.control(ctx, rest);
    if (operation !== undefined && XML_PRESET_OPERATIONS.includes(operation)) return this.xmlPreset(ctx, operation, rest);
    const cgi = ctx.path === '/cgi-bin/operator/ptzset' || ctx.path === '/cgi-bin/operator/ptzconfig';
    // Real firmware refuses a PTZ command with HTTP 200 and an error line (field notes).
    if (cgi && ctx.state.answer.refusePtz) return sendRefusal(ctx.res, 'Error moving the camera');
    if (ctx.path === '/cgi-bin/operator/ptzset') return this.ptzset(ctx);
    if (ctx.path === '/cgi-bin/operator/ptzconfig') return this.ptzconfig(ctx);
    return false;
  };

  private channelOf(ctx: SimContext, text: string | undefined): number | undefined {
    const channel = text === undefined ? 1 : Number(text);
    if (!Number.isInteger(channel) || channel < 1 || channel > this.channels) {
      sendXmlStatus(ctx.res, 12, 'Channel Error');
      return undefined;
    }
    return channel;
  }

  private caps(ctx: SimContext, rest: string[]): true {
    if (this.channelOf(ctx, rest[0]) === undefined) return true;
    sendXml(
      ctx.res,
      200,
      buildDocument('1.0', [
        xml.el('caps', [
          xml.uint('controlMinSpeed', this.speedRange.min),
          xml.uint('controlMaxSpeed', this.speedRange.max),
          xml.uint('presetMaxCount', this.presetMaxCount),
          xml.uint('cruiseMaxCount', 8),
          xml.uint('cruisePresetMinSpeed', 1),
          xml.uint('cruisePresetMaxSpeed', 8),
          xml.uint('cruisePresetMaxHoldTime', 240),
          xml.uint('cruisePresetMaxCount', 16),
        ]),
      ]),
    );
    return true;
  }

  /** `/PtzControl/<action>` or `/PtzControl/<channel>/<action>`. */
  private control(ctx: SimContext, rest: string[]): true {
    const [first, second] = rest;
    const channel = this.channelOf(ctx, second === undefined ? undefined : first);
    if (channel === undefined) return true;
    const action = second ?? first ?? '';
    if (!ACTIONS.includes(action)) return xmlFail(ctx, 1, 'Invalid Request');
    const body = xmlBody(ctx.res, ctx.body);
    if (!body) return true;
    const speed = Number(child(body, 'speed')?.text);
    if (!Number.isInteger(speed) || speed < this.speedRange.min || speed > this.speedRange.max) return xmlFail(ctx, 16, 'Range Error');
    const s = this.channel(channel);
    // Any manual command takes the camera off its cruise.
    this.runningCruise.delete(channel);
    if (action === 'Stop') Object.assign(s, { moving: false, action: undefined, speed: undefined });
    else Object.assign(s, { moving: true, action, speed });
    this.record({ api: 'xml', channel, action, speed, time: Date.now() });
    sendXmlSuccess(ctx.res);
    return true;
  }

  presetsOf(channel: number): Map<number, { name: string; position: number }> {
    let presets = this.xmlPresets.get(channel);
    if (!presets) this.xmlPresets.set(channel, (presets = new Map()));
    return presets;
  }

  cruisesOf(channel: number): Array<{ id: number; name: string }> {
    let list = this.cruises.get(channel);
    if (!list) this.cruises.set(channel, (list = [{ id: 1, name: 'Patrol' }, { id: 2, name: 'Perimeter' }]));
    return list;
  }

  /**
   * XML presets and cruises (field notes): `presetInfo` / `cruiseInfo` documents with an `id`
   * or a `name`, lists with the id as an attribute; `[/channel]` on every one. Checked with the
   * limits of lib/ops/ptz-presets.
   */
  private xmlPreset(ctx: SimContext, operation: string, rest: string[]): true {
    if (rest.length > 1) return xmlFail(ctx, 1, 'Invalid Request');
    const channel = this.channelOf(ctx, rest[0]);
    if (channel === undefined) return true;
    const presets = this.presetsOf(channel);
    const cruises = this.cruisesOf(channel);
    const list = (name: string, entries: Array<{ id: number; name: string }>, maxCount: number, maxLen?: number): true => {
      const itemType: XmlNode = { name: 'itemType', attrs: { type: 'string', ...(maxLen !== undefined && { maxLen }) } };
      const items = entries.map((e): XmlNode => ({ name: 'item', attrs: { id: e.id }, cdata: e.name }));
      sendXml(ctx.res, 200, buildDocument('1.0', [{ name, attrs: { type: 'list', maxCount, count: entries.length }, children: [itemType, ...items] }]));
      return true;
    };
    if (operation === 'PtzGetPresets') return list('presetInfo', [...presets].sort(([a], [b]) => a - b).map(([id, p]) => ({ id, name: p.name })), XML_PRESET_ID.max, XML_PRESET_NAME_MAX);
    if (operation === 'PtzGetCruises') return list('cruiseInfo', cruises, 8);
    if (operation === 'PtzStopCruise') {
      this.runningCruise.delete(channel);
      this.record({ api: 'xml', channel, action: 'stop cruise', time: Date.now() });
      sendXmlSuccess(ctx.res);
      return true;
    }
    if (ctx.method !== 'POST') return xmlFail(ctx, 1, 'Invalid Request');
    const body = xmlBody(ctx.res, ctx.body);
    if (!body) return true;
    const idText = child(body, 'id')?.text;
    const id = idText !== undefined && /^\d{1,9}$/.test(idText) ? Number(idText) : undefined;
    const s = this.channel(channel);
    switch (operation) {
      case 'PtzAddPreset': {
        const name = child(body, 'name')?.text;
        if (name === undefined || name === '') return xmlFail(ctx, 15, 'Missing Parameters');
        if ([...name].length > XML_PRESET_NAME_MAX) return xmlFail(ctx, 16, 'Range Error');
        const limit = Math.min(this.presetMaxCount, XML_PRESET_ID.max);
        let free = XML_PRESET_ID.min;
        while (presets.has(free) && free <= limit) free++;
        if (free > limit) return xmlFail(ctx, 19, 'Over Specifications');
        presets.set(free, { name, position: this.position });
        this.record({ api: 'xml', channel, action: `add preset ${free}`, time: Date.now() });
        break;
      }
      case 'PtzGotoPreset':
      case 'PtzDeletePreset': {
        if (id === undefined) return xmlFail(ctx, 15, 'Missing Parameters');
        if (id < XML_PRESET_ID.min || id > XML_PRESET_ID.max) return xmlFail(ctx, 16, 'Range Error');
        const preset = presets.get(id);
        if (!preset) return xmlFail(ctx, 20, 'Resources Not Exist');
        if (operation === 'PtzDeletePreset') presets.delete(id);
        else {
          this.position = preset.position;
          // The camera travels to the preset and stops there; a running cruise ends.
          Object.assign(s, { moving: false, action: undefined, speed: undefined });
          this.runningCruise.delete(channel);
        }
        this.record({ api: 'xml', channel, action: `${operation === 'PtzGotoPreset' ? 'goto' : 'delete'} preset ${id}`, time: Date.now() });
        break;
      }
      case 'PtzRunCruise': {
        if (id === undefined) return xmlFail(ctx, 15, 'Missing Parameters');
        if (id < XML_CRUISE_ID.min || id > XML_CRUISE_ID.max) return xmlFail(ctx, 16, 'Range Error');
        if (!cruises.some((c) => c.id === id)) return xmlFail(ctx, 20, 'Resources Not Exist');
        this.runningCruise.set(channel, id);
        Object.assign(s, { moving: false, action: undefined, speed: undefined });
        this.record({ api: 'xml', channel, action: `run cruise ${id}`, time: Date.now() });
        break;
      }
    }
    sendXmlSuccess(ctx.res);
    return true;
  }

  private ptzset(ctx: SimContext): true {
    const moves = ctx.query.filter(([k]) => k === 'move').map(([, v]) => v);
    const value = (key: string): string | undefined => ctx.query.find(([k]) => k === key)?.[1];
    const streamText = value('stream');
    if (streamText !== undefined && !/^\d+$/.test(streamText)) return bad(ctx, `bad stream ${streamText}`);
    const stream = streamText === undefined ? {} : { stream: Number(streamText) };
    const s = this.channel(1);
    if (moves.length > 0) {
      if (moves.some((m) => !MOVES.includes(m))) return bad(ctx, `unknown move ${moves.join(',')}`);
      const move = moves.find((m) => m !== 'repeat') ?? 'stop';
      if (move === 'home' && this.home === undefined) return bad(ctx, 'no home position set');
      const continuous = moves.includes('repeat') && move !== 'stop';
      if (move === 'home') this.position = this.home as number;
      else if (move !== 'stop' && move !== 'reset') this.position += 5;
      Object.assign(s, continuous ? { moving: true, action: move } : { moving: false, action: undefined });
      this.record({ api: 'cgi', channel: 1, action: continuous ? `${move}+repeat` : move, ...stream, time: Date.now() });
      return ok(ctx);
    }
    const presetNo = value('gotoserverpresetno');
    const presetName = value('gotoserverpresetname');
    if (presetNo !== undefined || presetName !== undefined) {
      const key = presetNo !== undefined ? `#${presetNo}` : `@${presetName}`;
      const position = this.presets.get(key);
      if (position === undefined) return sendRefusal(ctx.res, `Error going to preset ${key.slice(1)}`);
      this.position = position;
      // The camera travels to the preset and stops there: a continuous move ends.
      Object.assign(s, { moving: false, action: undefined });
      this.record({ api: 'cgi', channel: 1, action: `goto ${key}`, ...stream, time: Date.now() });
      return ok(ctx);
    }
    const run = value('runservertourno');
    const stop = value('stopservertourno');
    const tour = Number(run ?? stop);
    if ((run !== undefined || stop !== undefined) && Number.isInteger(tour) && tour >= 0 && tour <= 3) {
      if (run !== undefined) this.tours.add(tour);
      else this.tours.delete(tour);
      this.record({ api: 'cgi', channel: 1, action: `${run !== undefined ? 'run' : 'stop'} tour ${tour}`, ...stream, time: Date.now() });
      return ok(ctx);
    }
    return bad(ctx, 'nothing to do');
  }

  private ptzconfig(ctx: SimContext): true {
    const value = (key: string): string | undefined => ctx.query.find(([k]) => k === key)?.[1];
    if (ctx.query.some(([k]) => k === 'removeallpreset')) {
      this.presets.clear();
      this.record({ api: 'cgi', channel: 1, action: 'remove all presets', time: Date.now() });
      return ok(ctx);
    }
    const setNo = value('setserverpresetno');
    const setName = value('setserverpresetname');
    if (setNo !== undefined || setName !== undefined) {
      const key = setNo !== undefined ? presetNumberKey(setNo) : presetNameKey(setName as string);
      if (!key) return bad(ctx, 'bad preset');
      this.presets.set(key, this.position);
      if (value('home') === 'yes') this.home = this.position;
      this.record({ api: 'cgi', channel: 1, action: `save ${key}${value('home') === 'yes' ? ' home' : ''}`, time: Date.now() });
      return ok(ctx);
    }
    const removeNo = value('removeserverpresetno');
    const removeName = value('removeserverpresetname');
    if (removeNo !== undefined || removeName !== undefined) {
      const key = removeNo !== undefined ? presetNumberKey(removeNo) : presetNameKey(removeName as string);
      if (!key || !this.presets.delete(key)) return bad(ctx, 'no such preset');
      this.record({ api: 'cgi', channel: 1, action: `remove ${key}`, time: Date.now() });
      return ok(ctx);
    }
    return bad(ctx, 'nothing to do');
  }

  private record(command: PtzCommand): void {
    this.log.push(command);
    if (this.log.length > 1000) this.log.splice(0, this.log.length - 1000);
  }
}

function presetNumberKey(text: string): string | undefined {
  const n = Number(text);
  return /^\d+$/.test(text) && n >= 0 && n <= 31 ? `#${n}` : undefined;
}

function presetNameKey(name: string): string | undefined {
  return name !== '' && name.length <= 31 && !name.includes('~') ? `@${name}` : undefined;
}

function xmlFail(ctx: SimContext, code: number, desc: string): true {
  sendXmlStatus(ctx.res, code, desc);
  return true;
}

function ok(ctx: SimContext): true {
  sendText(ctx.res, 200, 'OK');
  return true;
}

function bad(ctx: SimContext, why: string): true {
  sendText(ctx.res, 400, `Bad Request: ${why}`);
  return true;
}
