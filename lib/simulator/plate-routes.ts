import { buildDocument, child, items, xml, type XmlElement, type XmlNode } from '../xml/codec';
import type { Route, SimContext } from './context';
import { ALARM_LISTS, ALARM_MODES, REGIONS, ZONE_MAX, type PlatePaging, type VehicleSettings } from './plate-db';
import { sendText, sendXml, sendXmlStatus, sendXmlSuccess, xmlBody } from './respond';

const MAX_ADD = 100;
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The plate database and vehicle configuration of the XML interface. */
export const plateRoutes: Route = (ctx) => {
  const [, operation, channel] = ctx.path.split('/');
  switch (operation) {
    case 'AddLicensePlates':
      return withBody(ctx, addPlates);
    case 'GetLicensePlates':
      return withBody(ctx, getPlates);
    case 'ModifyLicensePlate':
      return withBody(ctx, modifyPlate);
    case 'DeleteLicensePlate':
      return withBody(ctx, deletePlate);
    case 'GetSmartVehicleConfig':
      return vehicleRefused(ctx, channel) || sendVehicleConfig(ctx);
    case 'SetSmartVehicleConfig':
      return vehicleRefused(ctx, channel) || withBody(ctx, setVehicleConfig);
    default:
      return false;
  }
};

function withBody(ctx: SimContext, handler: (ctx: SimContext, root: XmlElement) => void): true {
  const root = xmlBody(ctx.res, ctx.body);
  if (root) handler(ctx, root);
  return true;
}

const rangeError = (ctx: SimContext): void => sendXmlStatus(ctx.res, 16, 'Range Error');
const text = (el: XmlElement | undefined, name: string): string | undefined => child(el, name)?.text;

function addPlates(ctx: SimContext, root: XmlElement): void {
  const list = items(child(root, 'licensePlates'));
  if (list.length === 0 || list.length > MAX_ADD) return rangeError(ctx);
  const reply = list.map((item, i) => {
    const index = Number(text(item, 'index') ?? i + 1);
    const code = ctx.state.plates.add(text(item, 'licensePlateNumber') ?? '', text(item, 'groupId') ?? '');
    return [xml.uint('index', index), xml.uint('errorCode', code)];
  });
  sendXml(ctx.res, 200, buildDocument('2.1.0', [xml.list('licensePlatesReply', reply)]));
}

function getPlates(ctx: SimContext, root: XmlElement): void {
  const filter = child(root, 'searchFilter');
  const offset = Number(text(filter, 'resultOffset'));
  const max = Number(text(filter, 'maxResult'));
  if (!Number.isInteger(offset) || offset < 1 || !Number.isInteger(max) || max < 1) return rangeError(ctx);
  const group = ctx.state.plates.inGroup(text(filter, 'groupId') ?? '1');
  if (group.length === 0) return sendXmlStatus(ctx.res, 20, 'Resources Not Exist');
  const start = ctx.state.plates.ignoreOffset ? 0 : offset - 1;
  const page = group.slice(start, start + max);
  const list: XmlNode = xml.list(
    'licensePlates',
    page.map((p) => [
      xml.str('licensePlateNumber', p.plate),
      xml.str('groupId', p.group),
      xml.str('beginTime', p.begin),
      xml.str('endTime', p.end),
      xml.str('licensePlateType', p.type),
      xml.str('carOwner', p.owner),
      xml.str('cardNumber', p.card),
      xml.str('telephone', p.phone),
    ]),
  );
  if (ctx.state.plates.sendTotal) list.attrs = { ...list.attrs, total: ctx.state.plates.bogusTotal ?? group.length };
  sendXml(ctx.res, 200, buildDocument('2.1.0', [list]));
}

const MODIFIABLE: Record<string, 'owner' | 'phone' | 'begin' | 'end'> = { carOwner: 'owner', telephone: 'phone', beginTime: 'begin', endTime: 'end' };

function modifyPlate(ctx: SimContext, root: XmlElement): void {
  const plate = child(root, 'licensePlate');
  const number = text(plate, 'licensePlateNumber');
  const group = text(plate, 'groupId');
  if (!plate || number === undefined || group === undefined) return sendXmlStatus(ctx.res, 15, 'Missing Parameters');
  // Spec: every modified element must carry type="string", else Range Error.
  if (plate.children.some((c) => c.attrs['type'] !== 'string')) return rangeError(ctx);
  const stored = ctx.state.plates.get(number, group);
  if (!stored) return sendXmlStatus(ctx.res, 204, 'Plate Not Exist');
  const changes = plate.children.filter((c) => MODIFIABLE[c.name] !== undefined);
  const next = { ...stored };
  for (const c of changes) next[MODIFIABLE[c.name] as 'owner'] = c.text;
  if (!DATE_TIME.test(next.begin) || !DATE_TIME.test(next.end) || next.begin > next.end) return rangeError(ctx);
  Object.assign(stored, next);
  sendXmlSuccess(ctx.res);
}

function deletePlate(ctx: SimContext, root: XmlElement): void {
  const action = child(root, 'deleteAction');
  const number = text(action, 'licensePlateNumber');
  const group = text(action, 'groupId');
  if (number === undefined || group === undefined) return sendXmlStatus(ctx.res, 15, 'Missing Parameters');
  if (!ctx.state.plates.remove(number, group)) return sendXmlStatus(ctx.res, 204, 'Plate Not Exist');
  sendXmlSuccess(ctx.res);
}

/**
 * Channel 1 only; API 2.1 firmware refuses the old command (field notes) with HTTP 400 and keeps
 * the connection. True when it answered the refusal (the route is done: answering a second time
 * would reset the connection, which firmware does not do).
 */
function vehicleRefused(ctx: SimContext, channel: string | undefined): boolean {
  if (channel !== undefined && channel !== '1') {
    sendXmlStatus(ctx.res, 12, 'Channel Error');
    return true;
  }
  if (ctx.state.vehicle.api === '2.1') {
    sendXmlStatus(ctx.res, 1, 'Invalid Request', 400);
    return true;
  }
  return false;
}

function vehicleBlock(v: VehicleSettings): XmlNode {
  const fields: XmlNode[] = [
    xml.bool('switch', v.enabled),
    xml.uint8('plateSencitivity', v.sensitivity),
    xml.text('plateSupportArea', v.region, 'plateAreaType'),
    xml.bool('saveTargetPicture', v.saveTargetPicture),
    xml.bool('saveSourcePicture', v.saveSourcePicture),
  ];
  if (v.api === '2.0') fields.push(xml.el('dedupMode', [xml.bool('switch', v.dedupEnabled), xml.uint('intervalTime', v.dedupInterval)]));
  fields.push(xml.list('regionInfo', [[xml.uint('X1', v.zone.X1), xml.uint('Y1', v.zone.Y1), xml.uint('X2', v.zone.X2), xml.uint('Y2', v.zone.Y2)]], 1));
  if (v.api === '2.0') fields.push(xml.el('plateMatch', [xml.text('alarmMode', v.alarmMode, 'alarmModeType')]));
  return xml.el('vehicle', fields);
}

function sendVehicleConfig(ctx: SimContext): true {
  const types = xml.el('types', [
    xml.el('plateAreaType', REGIONS.map((r) => ({ name: 'enum', attrs: { continent: r.continent }, text: r.name }))),
    xml.el('alarmListType', ALARM_LISTS.map((name) => xml.text('enum', name))),
  ]);
  sendXml(ctx.res, 200, buildDocument(ctx.state.vehicle.api === '2.0' ? '2.0.0' : '1.7', [types, vehicleBlock(ctx.state.vehicle)]));
  return true;
}

function setVehicleConfig(ctx: SimContext, root: XmlElement): void {
  const v = child(root, 'vehicle');
  if (!v) return sendXmlStatus(ctx.res, 15, 'Missing Parameters');
  // Spec: the misspelling is required when setting.
  if (child(v, 'plateSensitivity')) return rangeError(ctx);
  const next: VehicleSettings = { ...ctx.state.vehicle, zone: { ...ctx.state.vehicle.zone } };
  const enabled = flag(child(v, 'switch'));
  const sensitivity = int(child(v, 'plateSencitivity'));
  const region = text(v, 'plateSupportArea');
  const target = flag(child(v, 'saveTargetPicture'));
  const source = flag(child(v, 'saveSourcePicture'));
  const dedupSwitch = flag(child(child(v, 'dedupMode'), 'switch'));
  const interval = int(child(child(v, 'dedupMode'), 'intervalTime'));
  const alarmMode = text(child(v, 'plateMatch'), 'alarmMode');
  const rect = items(child(v, 'regionInfo'))[0];
  const bad =
    [enabled, target, source, dedupSwitch, sensitivity, interval].includes(null) ||
    (sensitivity != null && sensitivity > 100) ||
    (region !== undefined && !REGIONS.some((r) => r.name === region)) ||
    (alarmMode !== undefined && !ALARM_MODES.includes(alarmMode));
  if (bad) return rangeError(ctx);
  if (rect) {
    const zone = { X1: int(child(rect, 'X1')), Y1: int(child(rect, 'Y1')), X2: int(child(rect, 'X2')), Y2: int(child(rect, 'Y2')) };
    if (Object.values(zone).some((n) => n == null || n > ZONE_MAX)) return rangeError(ctx);
    if ((zone.X1 as number) >= (zone.X2 as number) || (zone.Y1 as number) >= (zone.Y2 as number)) return rangeError(ctx);
    next.zone = zone as VehicleSettings['zone'];
  }
  if (enabled != null) next.enabled = enabled;
  if (sensitivity != null) next.sensitivity = sensitivity;
  if (region !== undefined) next.region = region;
  if (target != null) next.saveTargetPicture = target;
  if (source != null) next.saveSourcePicture = source;
  if (dedupSwitch != null) next.dedupEnabled = dedupSwitch;
  if (interval != null) next.dedupInterval = interval;
  if (alarmMode !== undefined) next.alarmMode = alarmMode;
  ctx.state.vehicle = next;
  sendXmlSuccess(ctx.res);
}

/** A typed boolean element: undefined when absent, null when not `true`/`false`. */
function flag(el: XmlElement | undefined): boolean | undefined | null {
  if (el === undefined) return undefined;
  return el.text === 'true' ? true : el.text === 'false' ? false : null;
}

/** An unsigned integer element: undefined when absent, null when not digits. */
function int(el: XmlElement | undefined): number | undefined | null {
  if (el === undefined) return undefined;
  return /^\d+$/.test(el.text) ? Number(el.text) : null;
}

/**
 * Control API `POST /_sim/plates` `{ ignoreOffset?, sendTotal?, bogusTotal? }` (booleans;
 * `bogusTotal` a whole number, or null for the real count): how GetLicensePlates pages, changed
 * at run time. Answers the paging now in force.
 */
export function platePagingControl(ctx: SimContext): true {
  const answer = (status: number, value: object): true => {
    sendText(ctx.res, status, JSON.stringify(value, null, 2), 'application/json');
    return true;
  };
  let value: unknown;
  try {
    value = JSON.parse(ctx.body.toString('utf8'));
  } catch {
    return answer(400, { error: 'body is not JSON' });
  }
  if (typeof value !== 'object' || value === null) return answer(400, { error: 'give { ignoreOffset, sendTotal, bogusTotal }' });
  const v = value as Record<string, unknown>;
  const next: Partial<PlatePaging> = {};
  for (const key of ['ignoreOffset', 'sendTotal'] as const) {
    if (v[key] === undefined) continue;
    if (typeof v[key] !== 'boolean') return answer(400, { error: `${key} must be true or false` });
    next[key] = v[key];
  }
  const total = v['bogusTotal'];
  if (total !== undefined) {
    if (total !== null && !(typeof total === 'number' && Number.isInteger(total) && total >= 0)) return answer(400, { error: 'bogusTotal must be a whole number from 0, or null' });
    next.bogusTotal = total;
  }
  ctx.state.plates.setPaging(next);
  return answer(200, ctx.state.plates.paging);
}
