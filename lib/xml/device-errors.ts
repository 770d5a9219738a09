import { IpcamError } from '../errors/errors';
import { deviceWords } from '../errors/echo';
import { child, type XmlElement } from './codec';

/** Readable text for the device error codes listed in the field notes. */
const DEVICE_ERRORS: Record<number, string> = {
  1: 'Invalid request (or not supported by this firmware)',
  2: 'Invalid XML format',
  3: 'Invalid XML content',
  4: 'Permission denied',
  5: 'Network port error or client blocked',
  6: 'Sensor id error',
  7: 'System busy',
  8: 'Password expired',
  9: 'Unauthorized',
  10: 'User locked',
  11: 'Unsupported function',
  12: 'Channel error',
  13: 'SD card error',
  14: 'Action error',
  15: 'Missing required parameters',
  16: 'Range error: a value is out of range or malformed',
  17: 'Service not enabled',
  18: 'Modification not allowed',
  19: 'Over specifications',
  20: 'Resources do not exist',
  79: 'Internal device error',
  80: 'Upgrade error',
  81: 'Upgrade error',
  82: 'Upgrade error',
  83: 'Upgrade error',
  84: 'Upgrade error',
  201: 'Plate processing error',
  202: 'Plate library full',
  203: 'Plate already exists',
  204: 'Plate not found',
  205: 'Plate group already exists',
  206: 'Too many plate groups',
  207: 'Plate group does not exist',
};

/**
 * The descriptions firmware sends with its codes (spec, field notes): shown as they are, as they
 * are known words and cannot hold a secret. Any other description is the device's own text.
 */
const KNOWN_DESCRIPTIONS = new Map(
  [
    'No Error',
    'Invalid Request',
    'Invalid XML Format',
    'Invalid XML Content',
    'Permission Denied',
    'Sensor Id Error',
    'System Busy',
    'Password Expired',
    'Unauthorized',
    'User Locked',
    'Unsupported Function',
    'Channel Error',
    'Action Error',
    'Missing Parameters',
    'Range Error',
    'Service Not Enabled',
    'Modification Not Allowed',
    'Over Specifications',
    'Resources Not Exist',
    'Internal Error',
    'Plate Not Exist',
    'Plate Already Exists',
    'Plate Library Full',
  ].map((d) => [d.toLowerCase(), d]),
);

/** Password expired, unauthorized, user locked: credential problems, whatever the HTTP status. */
const AUTH_CODES = new Set([8, 9, 10]);

export function deviceErrorText(code: number): string {
  return DEVICE_ERRORS[code] ?? 'Device error';
}

/**
 * A device's `errorDesc` as it may be shown: a known description as we spell it; other text on
 * one line, shortened, and only when it holds none of `secrets` (else undefined: omitted).
 */
export function shownDescription(desc: string | undefined, secrets: readonly string[]): string | undefined {
  if (desc === undefined) return undefined;
  const known = KNOWN_DESCRIPTIONS.get(desc.trim().replace(/\s+/g, ' ').toLowerCase());
  return known ?? deviceWords(desc, secrets);
}

export interface FailureContext {
  /** HTTP status of the answer. */
  status?: number;
  /** What the device's own words must not hold to be shown (the client's `secrets`). */
  secrets: readonly string[];
}

/**
 * The error a failure document stands for, or undefined for a success document. Firmware puts
 * `status`/`errorCode` in attributes or in child elements, with HTTP 200 or 400. The text is
 * ours, keyed on the code; the device's description is added only as `shownDescription` allows.
 */
export function failureOf(root: XmlElement, context: FailureContext): IpcamError | undefined {
  const httpStatus = context.status;
  const status = (root.attrs['status'] ?? child(root, 'status')?.text ?? '').toLowerCase();
  const codeText = root.attrs['errorCode'] ?? child(root, 'errorCode')?.text;
  const code = codeText !== undefined && /^\d{1,9}$/.test(codeText.trim()) ? Number(codeText) : undefined;
  if (status !== 'failed' && (code === undefined || code === 0)) return undefined;
  const desc = shownDescription(root.attrs['errorDesc'] ?? child(root, 'errorDesc')?.text, context.secrets);
  const deviceCode = code ?? -1;
  const message = `${deviceErrorText(deviceCode)} (device error ${code ?? 'without code'}${desc ? `: ${desc}` : ''})`;
  return new IpcamError(AUTH_CODES.has(deviceCode) ? 'EAUTH' : 'EDEVICE', message, {
    deviceCode,
    ...(desc !== undefined && { deviceDesc: desc }),
    ...(httpStatus !== undefined && { status: httpStatus }),
  });
}
