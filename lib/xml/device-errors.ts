import { IpcamError } from '../errors';
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

/** Password expired, unauthorized, user locked: credential problems, whatever the HTTP status. */
const AUTH_CODES = new Set([8, 9, 10]);

export function deviceErrorText(code: number): string {
  return DEVICE_ERRORS[code] ?? 'Device error';
}

/**
 * The error a failure document stands for, or undefined for a success document. Firmware puts
 * `status`/`errorCode` in attributes or in child elements, with HTTP 200 or 400.
 */
export function failureOf(root: XmlElement, httpStatus?: number): IpcamError | undefined {
  const status = (root.attrs['status'] ?? child(root, 'status')?.text ?? '').toLowerCase();
  const codeText = root.attrs['errorCode'] ?? child(root, 'errorCode')?.text;
  const code = codeText !== undefined && /^\d+$/.test(codeText.trim()) ? Number(codeText) : undefined;
  if (status !== 'failed' && (code === undefined || code === 0)) return undefined;
  const desc = root.attrs['errorDesc'] ?? child(root, 'errorDesc')?.text;
  const deviceCode = code ?? -1;
  const message = `${deviceErrorText(deviceCode)} (device error ${code ?? 'without code'}${desc ? `: ${desc}` : ''})`;
  return new IpcamError(AUTH_CODES.has(deviceCode) ? 'EAUTH' : 'EDEVICE', message, {
    deviceCode,
    ...(desc !== undefined && { deviceDesc: desc }),
    ...(httpStatus !== undefined && { status: httpStatus }),
  });
}
