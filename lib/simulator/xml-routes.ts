import { buildDocument, xml } from '../xml/codec';
import type { Route } from './context';
import { sendXml } from './respond';

/** GetDeviceInfo, as cameras answer it: a typed `deviceInfo` block. */
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
        xml.str('firmwareVersion', d.firmwareVersion),
        xml.str('firmwareReleaseDate', '2026-01-01'),
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
