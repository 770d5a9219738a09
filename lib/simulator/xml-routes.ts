import { PASSWORD_MAX, USER_NAME_MAX } from '../ops/device';
import { buildDocument, child, xml } from '../xml/codec';
import type { Route, SimContext } from './context';
import { SNAPSHOT_JPEG } from './images';
import { sendBuffer, sendXml, sendXmlStatus, sendXmlSuccess, xmlBody } from './respond';

/** GetDeviceInfo, as cameras answer it: a typed `deviceInfo` block with `softwareVersion` and `softwareBuildDate`. */
export const deviceInfoRoute: Route = (ctx) => {
  if (ctx.path !== '/GetDeviceInfo') return false;
  const d = ctx.state.device;
  sendXml(
    ctx.res,
    200,
    buildDocument('1.7', [
      xml.el('deviceInfo', [
        xml.str('deviceName', d.deviceName),
        xml.str('deviceDescription', 'IPC'),
        xml.str('model', d.model),
        xml.str('brand', d.brand),
        xml.str('mac', d.mac),
        xml.str('sn', d.sn),
        // As real firmware names them (field notes), not as older firmware or our types do.
        xml.str('softwareVersion', d.firmwareVersion),
        xml.str('softwareBuildDate', '2026-01-01'),
        xml.str('hardwareVersion', d.hardwareVersion),
        xml.str('kernelVersion', '4.9.37'),
        xml.uint('audioInCount', 1),
        xml.uint('alarmInCount', 2),
        xml.uint('alarmOutCount', 2),
      ]),
    ]),
  );
  return true;
};

/** GetHttpPostConfig: the `httpPost` block as SetHttpPostConfig left it, and an `httpPostV2` mirror. */
export const httpPostConfigRoute: Route = (ctx) => {
  if (ctx.path !== '/GetHttpPostConfig') return false;
  const c = ctx.state.httpPost ?? { enabled: false, serverIp: '', serverPort: 80, keepalive: 30, url: '/' };
  sendXml(
    ctx.res,
    200,
    buildDocument('1.0', [
      xml.el('httpPost', [
        xml.bool('bSwitch', c.enabled),
        xml.text('protocolType', 'HTTP', 'protocolType'),
        xml.str('serverIp', c.serverIp),
        xml.text('serverPort', String(c.serverPort), 'uint16'),
        xml.uint('keepaliveTimeval', c.keepalive),
        xml.bool('onlineStatus', false),
        xml.str('URL', c.url),
      ]),
      xml.el('httpPostV2', [
        xml.el('postUrlConf', [
          xml.list('urlList', ctx.state.httpPost ? [[xml.el('url', [xml.text('protocol', 'http'), xml.str('domain', c.serverIp), xml.text('port', String(c.serverPort), 'uint16'), xml.str('path', c.url), xml.text('authentication', 'none')])]] : [], 3),
          xml.bool('heatBeatSwitch', c.enabled),
          xml.text('subscribeDateType', 'alarm'),
        ]),
      ]),
    ]),
  );
  return true;
};

/** `/GetSnapshot[/channel]` (GET): a raw JPEG; a channel the device has not is errorCode 12. */
export const xmlSnapshotRoute: Route = (ctx) => {
  const match = /^\/GetSnapshot(?:\/([^/]*))?$/.exec(ctx.path);
  if (!match) return false;
  const channel = match[1];
  if (channel !== undefined && !(/^\d{1,3}$/.test(channel) && Number(channel) >= 1 && Number(channel) <= ctx.state.ptz.channels)) {
    sendXmlStatus(ctx.res, 12, 'Channel Error');
    return true;
  }
  sendBuffer(ctx.res, 200, SNAPSHOT_JPEG, 'image/jpeg');
  return true;
};

/**
 * ModifyPassword (POST only): changes the password the device accepts, on both interfaces, at
 * once. Checked with the limits of lib/ops/device: missing is errorCode 15, too long 16, a user
 * the device does not have 20.
 */
export const modifyPasswordRoute: Route = (ctx) => {
  if (ctx.path !== '/ModifyPassword') return false;
  if (ctx.method !== 'POST') return fail(ctx, 1, 'Invalid Request');
  const root = xmlBody(ctx.res, ctx.body);
  if (!root) return true;
  const password = child(root, 'newPassword')?.text;
  const user = child(root, 'userName')?.text;
  if (password === undefined || password === '') return fail(ctx, 15, 'Missing Parameters');
  if ([...password].length > PASSWORD_MAX || (user !== undefined && [...user].length > USER_NAME_MAX)) return fail(ctx, 16, 'Range Error');
  if (user !== undefined && user !== ctx.state.account.username) return fail(ctx, 20, 'Resources Not Exist');
  ctx.state.account.password = password;
  sendXmlSuccess(ctx.res);
  return true;
};

function fail(ctx: SimContext, code: number, desc: string): true {
  sendXmlStatus(ctx.res, code, desc);
  return true;
}

/** The XML-interface device routes of this file. */
const ROUTES: readonly Route[] = [deviceInfoRoute, httpPostConfigRoute, xmlSnapshotRoute, modifyPasswordRoute];
export const xmlDeviceRoutes: Route = async (ctx) => {
  for (const route of ROUTES) if (await route(ctx)) return true;
  return false;
};
