/** Spec 4.13 and 4.14: lens control (refocus), climate and defog (equip). */
import { IpcamError, inputError } from '../errors/errors';
import { bool, int, oneOf, optional, shape, withLabels } from '../input/params';
import { defineOp, type Operation } from './types';

const REFOCUS = '/cgi-bin/admin/refocus';
const EQUIP = '/cgi-bin/admin/equip';

/** Spec 8: lens `value` -80 to 80 (steps of -10 to 10 advised), `Position` 0-100. */
export const LENS_STEP = { min: -80, max: 80 } as const;
export const LENS_POSITION = { min: 0, max: 100 } as const;
export const LENS_MODES = ['zoom', 'focus', 'smart'] as const;
export const SMART_METHODS = ['full', 'fast'] as const;

const lensParams = shape({
  mode: oneOf(LENS_MODES),
  step: optional(int(LENS_STEP)),
  position: optional(int(LENS_POSITION)),
  method: optional(oneOf(SMART_METHODS)),
});

export const lens = defineOp({
  name: 'lens',
  label: 'Zoom and focus',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Zooms or focuses a motorized lens by a step or to a position, or runs the smart focus',
  params: withLabels(lensParams, { mode: 'Action', step: 'Step', position: 'Position', method: 'Focus method' }),
  request(p) {
    if (p.mode === 'smart') {
      if (p.step !== undefined || p.position !== undefined) throw inputError('smart focus takes method (full or fast), not step or position');
      return { path: REFOCUS, query: [['mode', 'smart'], ['method', p.method ?? 'fast']], what: 'smart focus' };
    }
    if (p.method !== undefined) throw inputError(`method is for smart focus only, not ${p.mode}`);
    if ((p.step === undefined) === (p.position === undefined)) throw inputError(`${p.mode} takes either step (${LENS_STEP.min} to ${LENS_STEP.max}) or position (${LENS_POSITION.min} to ${LENS_POSITION.max})`);
    // The spec writes `Position` capitalised in its table and lower case in its example: the table's spelling is sent.
    return { path: REFOCUS, query: p.step !== undefined ? [['mode', p.mode], ['value', p.step]] : [['mode', p.mode], ['Position', p.position as number]], what: `lens ${p.mode}` };
  },
  parse: () => ({ payload: { ok: true } }),
});

export interface Climate {
  temperatureC: number;
  temperatureF: number;
  fan: string;
  heater: string;
}

/** `temperaturec=41.5 temperaturef=106.7 fan=on heater=off` (one line, pairs apart by spaces). */
export function parseClimate(text: string): Climate {
  const pairs = new Map<string, string>();
  for (const token of text.trim().split(/\s+/).slice(0, 32)) {
    const at = token.indexOf('=');
    if (at > 0) pairs.set(token.slice(0, at).toLowerCase(), token.slice(at + 1));
  }
  const number = (key: string): number => {
    const value = Number(pairs.get(key));
    if (!pairs.has(key) || !Number.isFinite(value)) throw new IpcamError('EPARSE', `The climate answer has no readable ${key}`);
    return value;
  };
  const word = (key: string): string => {
    const value = pairs.get(key);
    if (value === undefined) throw new IpcamError('EPARSE', `The climate answer has no ${key}`);
    return value.slice(0, 32);
  };
  return { temperatureC: number('temperaturec'), temperatureF: number('temperaturef'), fan: word('fan'), heater: word('heater') };
}

export const readClimate = defineOp({
  name: 'readClimate',
  label: 'Housing climate',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Reads the housing temperature, fan and heater',
  params: shape({}),
  request: () => ({ path: EQUIP, what: 'climate read' }),
  parse: (answer) => ({ payload: parseClimate(answer.text) }),
});

export const setDefog = defineOp({
  name: 'setDefog',
  label: 'Defog on or off',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Turns defog on or off',
  params: withLabels(shape({ on: bool() }), { on: 'Defog on' }),
  request: (p) => ({ path: EQUIP, query: { defog: p.on ? 'on' : 'off' }, what: 'defog' }),
  parse: () => ({ payload: { ok: true } }),
});

export const EQUIPMENT_OPERATIONS: readonly Operation[] = [lens, readClimate, setDefog];
