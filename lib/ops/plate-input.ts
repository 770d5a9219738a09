import { inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { checkDeviceDateTime, checkText, text, type TextRule } from '../input/params';

/** A plate as flows give it; `group` defaults to `'1'`. */
export interface PlateInput {
  plate: string;
  group?: string;
  owner?: string;
  phone?: string;
  /** Start of validity, `YYYY-MM-DD HH:MM:SS`. */
  begin?: string;
  /** End of validity, same format. */
  end?: string;
}

/** A checked plate: group filled in, optional fields only where given. */
export interface CheckedPlate extends PlateInput {
  group: string;
}

export const DEFAULT_GROUP = '1';

/**
 * What each plate field may hold (the spec gives no lengths): one line of XML 1.0 text (a plate
 * number has no line breaks; CR and LF would be stored altered and split log lines), at most:
 * plate number 32 characters (real plates have about 10), group 64, owner 64, phone 32.
 */
export const PLATE_RULES = {
  plate: { what: 'A plate number', max: 32, xml: true },
  group: { what: 'Plate group', max: 64, xml: true },
  owner: { what: 'Plate owner', max: 64, min: 0, xml: true },
  phone: { what: 'Plate phone', max: 32, min: 0, xml: true },
} as const satisfies Record<string, TextRule>;
const OPTIONAL_TEXT = ['owner', 'phone'] as const;

/**
 * The Group setting of the plate nodes: sent as it stands, so not blank and without spaces
 * around it (a group in msg.payload is checked by `checkGroup`).
 */
export const PLATE_GROUP = text({ max: PLATE_RULES.group.max, pattern: /^\S(.*\S)?$/, patternText: 'the plate group, e.g. 1 (not blank, no spaces around it)' });

/** `YYYY-MM-DD HH:MM:SS` that names a real moment (no 2026-02-30, no 25:00:00). */
export function checkDateTime(value: unknown, what: string): string {
  return checkDeviceDateTime(value, what);
}

export function checkGroup(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_GROUP;
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw inputError(`Plate group must be text or a whole number, got ${echo(value)}`);
  return checkText(value, PLATE_RULES.group);
}

export function checkPlateNumber(value: unknown): string {
  if (typeof value !== 'string') throw inputError(`A plate must be text, got ${echo(value)}`);
  return checkText(value, PLATE_RULES.plate);
}

/** Accepts `'ABC123'` or `{ plate, group, owner, phone, begin, end }`; `group` fills a missing group. */
export function checkPlate(value: unknown, group?: unknown): CheckedPlate {
  const fields = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { plate: value };
  const plate: CheckedPlate = { plate: checkPlateNumber(fields['plate']), group: checkGroup(fields['group'] ?? group) };
  for (const key of OPTIONAL_TEXT) {
    const v = fields[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' && typeof v !== 'number') throw inputError(`Plate ${plate.plate}: ${key} must be text`);
    plate[key] = checkText(v, { ...PLATE_RULES[key], what: `Plate ${plate.plate}: ${key}` });
  }
  // An empty date (as a device record may carry) means "not given".
  if (given(fields['begin'])) plate.begin = checkDateTime(fields['begin'], `Plate ${plate.plate}: begin`);
  if (given(fields['end'])) plate.end = checkDateTime(fields['end'], `Plate ${plate.plate}: end`);
  // The fixed-width format sorts like the moments it names.
  if (plate.begin !== undefined && plate.end !== undefined && plate.begin > plate.end) {
    throw inputError(`Plate ${plate.plate}: begin ${plate.begin} is after end ${plate.end}`);
  }
  return plate;
}

function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** A list of plates (or one plate): every entry checked before anything is sent. */
/**
 * Most plates a device is taken to hold: above the plate library of any device seen (tens of
 * thousands). It bounds a whole read and every list sent: a device that sends more is not read
 * to the end, and a longer list is refused before anything is sent.
 */
export const MAX_PLATES = 100_000;

export function checkPlateList(value: unknown, group?: unknown): CheckedPlate[] {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw inputError('The plate list is empty');
  if (list.length > MAX_PLATES) throw inputError(`The plate list has ${list.length} plates; no device holds more than ${MAX_PLATES}`);
  return list.map((entry) => checkPlate(entry, group));
}

/** True when the plate carries fields that only ModifyLicensePlate can set. */
export function hasDetails(plate: PlateInput): boolean {
  return plate.owner !== undefined || plate.phone !== undefined || plate.begin !== undefined || plate.end !== undefined;
}
