import { buildDocument, xml, type XmlNode } from '../xml/codec';
import type { Route } from './context';
import { sendXml, sendXmlStatus } from './respond';

/** Alarms a test or the demo can raise; inputs and motion levels come from the I/O section. */
export type RaisedAlarm = 'motionAlarm' | 'vehicleAlarm' | 'intrusionAlarm';
const RAISED: readonly RaisedAlarm[] = ['motionAlarm', 'vehicleAlarm', 'intrusionAlarm'];
/** Motion alarms by detection window id, as the I/O section numbers its motion groups. */
const MOTION_IDS = [1, 2];

/**
 * GetAlarmStatus of the simulated camera, as the field notes describe real answers: typed
 * booleans, `motionAlarm` repeated with ids, `sensorAlarmIn` as a list with an `itemType` first,
 * `vehicleAlarm` without an id. A raised alarm drops to false after its hold time, whether or
 * not its cause is still there (computed when read: no timers).
 */
export class SimulatedAlarms {
  /** How long a raised alarm stays true (ms). */
  holdMs = 10_000;
  /** Until when each raised alarm is true, by `name#id` (bounded: known names and ids only). */
  private readonly until = new Map<string, number>();

  /** Raises `alarm` (motion: window 1 or 2) for `holdMs`; false for an alarm this device has not. */
  raise(alarm: RaisedAlarm, id?: number, holdMs = this.holdMs): boolean {
    if (!RAISED.includes(alarm)) return false;
    if (alarm === 'motionAlarm' ? !MOTION_IDS.includes(id ?? 0) : id !== undefined) return false;
    this.until.set(`${alarm}#${id ?? ''}`, Date.now() + Math.max(0, Math.min(holdMs, 3_600_000)));
    return true;
  }

  clear(): void {
    this.until.clear();
  }

  private active(alarm: RaisedAlarm, id?: number): boolean {
    return (this.until.get(`${alarm}#${id ?? ''}`) ?? 0) > Date.now();
  }

  readonly route: Route = (ctx) => {
    const match = /^\/GetAlarmStatus(?:\/([^/]*))?$/.exec(ctx.path);
    if (!match) return false;
    const channelText = match[1];
    if (channelText !== undefined && !(/^\d{1,3}$/.test(channelText) && Number(channelText) >= 1 && Number(channelText) <= ctx.state.ptz.channels)) {
      sendXmlStatus(ctx.res, 12, 'Channel Error');
      return true;
    }
    const io = ctx.state.io;
    const flag = (name: string, value: boolean, id?: number): XmlNode => ({ name, attrs: { type: 'boolean', ...(id !== undefined && { id }) }, text: String(value) });
    const motion = MOTION_IDS.map((id) => {
      const level = io.levels.motion.get(id);
      return flag('motionAlarm', this.active('motionAlarm', id) || (level !== undefined && level.level >= level.threshold), id);
    });
    const inputs = [...io.inputs].sort(([a], [b]) => a - b);
    const sensors: XmlNode = {
      name: 'sensorAlarmIn',
      attrs: { type: 'list', count: inputs.length },
      children: [{ name: 'itemType', attrs: { type: 'boolean' } }, ...inputs.map(([id, on]): XmlNode => ({ name: 'item', attrs: { id }, text: String(on) }))],
    };
    sendXml(
      ctx.res,
      200,
      buildDocument('1.0', [xml.el('alarmStatusInfo', [...motion, sensors, flag('vehicleAlarm', this.active('vehicleAlarm')), flag('intrusionAlarm', this.active('intrusionAlarm'))])]),
    );
    return true;
  };
}
