import { LENS_MODES, LENS_POSITION, LENS_STEP, SMART_METHODS } from '../ops/equipment';
import type { Route } from './context';
import { queryValue } from './context';
import { sendText } from './respond';

/** Lens (refocus) and climate (equip) of a simulated camera, checked with the spec's limits. */
export class SimulatedEquipment {
  temperatureC = 41.5;
  fan = 'on';
  heater = 'off';
  defog = false;
  zoom = 0;
  focus = 50;
  /** Smart focus runs, by method. */
  readonly smartRuns: string[] = [];

  readonly route: Route = (ctx) => {
    if (ctx.path === '/cgi-bin/admin/equip') {
      const defog = queryValue(ctx, 'defog');
      if (defog === undefined) {
        const f = Math.round((this.temperatureC * 9) / 5 * 10 + 320) / 10;
        sendText(ctx.res, 200, `temperaturec=${this.temperatureC} temperaturef=${f} fan=${this.fan} heater=${this.heater}\r\n`);
      } else if (defog === 'on' || defog === 'off') {
        this.defog = defog === 'on';
        sendText(ctx.res, 200, 'OK\r\n');
      } else {
        sendText(ctx.res, 200, `# Error: Error setting 'defog'\r\n`);
      }
      return true;
    }
    if (ctx.path !== '/cgi-bin/admin/refocus') return false;
    sendText(ctx.res, 200, this.refocus(ctx.query));
    return true;
  };

  private refocus(query: Array<[string, string]>): string {
    const get = (key: string): string | undefined => query.find(([k]) => k.toLowerCase() === key)?.[1];
    const mode = get('mode');
    if (!(LENS_MODES as readonly string[]).includes(mode ?? '')) return "# Error: Error setting 'mode'\r\n";
    if (mode === 'smart') {
      const method = get('method') ?? 'fast';
      if (!(SMART_METHODS as readonly string[]).includes(method)) return "# Error: Error setting 'method'\r\n";
      this.smartRuns.push(method);
      this.focus = 63;
      return 'OK\r\n';
    }
    const step = get('value');
    const position = get('position');
    const inRange = (text: string | undefined, r: { min: number; max: number }): number | undefined => {
      const n = Number(text);
      return text !== undefined && /^-?\d+$/.test(text) && n >= r.min && n <= r.max ? n : undefined;
    };
    const key = mode as 'zoom' | 'focus';
    if (step !== undefined) {
      const n = inRange(step, LENS_STEP);
      if (n === undefined) return "# Error: Error setting 'value'\r\n";
      this[key] = Math.max(LENS_POSITION.min, Math.min(LENS_POSITION.max, this[key] + n));
      return 'OK\r\n';
    }
    const n = inRange(position, LENS_POSITION);
    if (n === undefined) return "# Error: Error setting 'Position'\r\n";
    this[key] = n;
    return 'OK\r\n';
  }
}
