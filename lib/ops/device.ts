/**
 * XML interface, spec 4.7 "other operations" and the field notes: device information, alarm
 * status, PTZ capabilities, the HTTP post configuration and the password. Requests and parsers
 * that other parts of the library use too live in lib/xml and serve both from there.
 */
import { int, optional, shape, text, withDefault, withLabels } from '../input/params';
import { buildDocument, xml } from '../xml/codec';
import { ALARM_STATUS_PATH, parseAlarmStatus } from './alarm-status';
import { channelPath, MAX_CHANNEL } from '../xml/channel';
import { DEVICE_INFO_PATH, parseDeviceInfo } from './device-info';
import { GET_HTTP_POST_PATH, parseHttpPostConfig, setHttpPostConfigOp } from './http-post';
import { parsePtzCaps, ptzCapsPath } from './ptz-xml';
import { defineOp, type OpRequest, type Operation } from './types';

export const CHANNEL = { min: 1, max: MAX_CHANNEL } as const;
/** Longest password and user name sent (the spec gives none; device pages allow 16 and 32). */
export const PASSWORD_MAX = 64;
export const USER_NAME_MAX = 32;
export const MODIFY_PASSWORD_PATH = '/ModifyPassword';

export const getDeviceInfo = defineOp({
  name: 'getDeviceInfo',
  label: 'Device information',
  api: 'xml',
  access: 'view',
  class: 'read',
  summary: 'Reads who the device is: name, model, firmware, MAC, serial number and every other field it sends',
  params: shape({}),
  request: () => ({ method: 'GET', path: DEVICE_INFO_PATH }),
  parse(root) {
    const { fields, ...named } = parseDeviceInfo(root);
    return { payload: { ...fields, ...named } };
  },
});

export const getAlarmStatus = defineOp({
  name: 'getAlarmStatus',
  label: 'Alarm states',
  api: 'xml',
  access: 'view',
  class: 'read',
  summary: 'Reads the current alarm states (motion, sensor inputs, vehicle, ...), one entry per alarm',
  params: withLabels(shape({ channel: optional(int(CHANNEL)) }), { channel: 'Channel' }),
  request: (p) => ({ path: channelPath(ALARM_STATUS_PATH, p.channel) }),
  parse: (root) => ({ payload: parseAlarmStatus(root) }),
});

export const getPtzCaps = defineOp({
  name: 'getPtzCaps',
  label: 'PTZ capabilities',
  api: 'xml',
  access: 'view',
  class: 'read',
  summary: 'Reads the PTZ capabilities of a channel: speed range, preset and cruise counts',
  params: withLabels(shape({ channel: withDefault(int(CHANNEL), 1) }), { channel: 'Channel' }),
  request: (p) => ({ path: ptzCapsPath(p.channel) }),
  parse: (root) => ({ payload: parsePtzCaps(root) }),
});

export const getHttpPostConfig = defineOp({
  name: 'getHttpPostConfig',
  label: 'Event post settings',
  api: 'xml',
  access: 'admin',
  class: 'read',
  summary: 'Reads where the device posts its events (server, port, path, keep-alive, on/off)',
  params: shape({}),
  request: () => ({ path: GET_HTTP_POST_PATH }),
  parse: (root) => ({ payload: parseHttpPostConfig(root) }),
});

/** The entry lives with the HTTP post config (lib/ops/http-post.ts), whose library function runs it too. */
export { setHttpPostConfigOp as setHttpPostConfig } from './http-post';

const MODIFY_PASSWORD_PARAMS = shape({
  newPassword: text({ max: PASSWORD_MAX, xml: true, secret: true }),
  user: optional(text({ max: USER_NAME_MAX, xml: true })),
});

/**
 * The ModifyPassword request (POST only, field notes). The spec shows no document: the user
 * (when given) and the new password go as strings, in CDATA.
 */
export function modifyPasswordRequest(p: { newPassword: string; user?: string | undefined }): OpRequest {
  const fields = [...(p.user !== undefined ? [xml.str('userName', p.user)] : []), xml.str('newPassword', p.newPassword)];
  // A device may echo what it got: none of its words holding a piece of the new password is shown.
  return { method: 'POST', path: MODIFY_PASSWORD_PATH, xml: buildDocument('1.0', fields), secrets: [p.newPassword] };
}

export const modifyPassword = defineOp({
  name: 'modifyPassword',
  label: 'Change the account password',
  api: 'xml',
  access: 'admin',
  class: 'destructive',
  summary: 'Changes the account password (then update the password of the ipcam-device node)',
  params: withLabels(MODIFY_PASSWORD_PARAMS, { newPassword: 'New password', user: 'Account' }),
  async run(ctx, p) {
    await ctx.xml(modifyPasswordRequest(p));
    return { payload: { ok: true } };
  },
});

export const DEVICE_OPERATIONS: readonly Operation[] = [getDeviceInfo, getAlarmStatus, getPtzCaps, getHttpPostConfig, setHttpPostConfigOp, modifyPassword];
