/**
 * PTZ presets and cruises (tours) of the XML interface. The spec does not show them; the field
 * notes do: `PtzGotoPreset`, `PtzDeletePreset` and `PtzAddPreset` take a `presetInfo` document,
 * `PtzGetPresets` and `PtzGetCruises` answer lists whose items carry the id as an attribute,
 * `PtzRunCruise` takes a `cruiseInfo` document and `PtzStopCruise` no body. All take a channel.
 */
import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { checkWhole, int, objectParam, text } from '../input/params';
import { checkChannel } from '../xml/channel';
import { buildDocument, child, items, xml, type XmlElement } from '../xml/codec';
import { defineOp, type Operation } from './types';

/** Field notes: PtzGetPresets answers `maxCount="360"` (PtzGetCaps `presetMaxCount` 255 on cameras). */
export const XML_PRESET_ID = { min: 1, max: 360 } as const;
/** Field notes: preset names of at most 10 characters on the XML side (`itemType maxLen="10"`). */
export const XML_PRESET_NAME_MAX = 10;
/** Cruise ids: the notes give no bound (PtzGetCaps `cruiseMaxCount` tells the device's own). */
export const XML_CRUISE_ID = { min: 1, max: 255 } as const;
/** Most entries read from a preset or cruise list (above the largest `maxCount` seen). */
export const PTZ_LIST_MAX = 1024;
const INFO_VERSION = '1.0';

export const xmlPresetId = int(XML_PRESET_ID);
export const xmlPresetName = text({ max: XML_PRESET_NAME_MAX, xml: true });
export const xmlCruiseId = int(XML_CRUISE_ID);

/** One XML request: the path and its document, if any. */
export interface XmlRequest {
  path: string;
  xml?: string;
  /** Safe to send twice (a list read, a preset gone to, a cruise stopped): see `OpRequest.repeatable`. */
  repeatable?: boolean;
}

/** A preset or cruise as the device lists it. */
export interface PtzListEntry {
  id: number;
  name: string;
}

/** A preset as a flow names it: an id (a number or its digits) or a name. */
export function checkXmlPreset(value: unknown): number | string {
  if (typeof value === 'number' || (typeof value === 'string' && /^\s*\d{1,16}\s*$/.test(value))) return checkWhole(value, 'Preset id', XML_PRESET_ID.min, XML_PRESET_ID.max);
  if (typeof value !== 'string') throw inputError(`Preset must be an id ${XML_PRESET_ID.min}-${XML_PRESET_ID.max} or a name, got ${echo(value)}`);
  return xmlPresetName.parse(value, 'Preset name');
}

function on(operation: string, channel: number): string {
  return `/${operation}/${checkChannel(channel)}`;
}

function idDocument(root: 'presetInfo' | 'cruiseInfo', id: number): string {
  return buildDocument(INFO_VERSION, [xml.text('id', String(id))], root);
}

export function gotoPresetRequest(channel: number, id: number): XmlRequest {
  return { path: on('PtzGotoPreset', channel), xml: idDocument('presetInfo', xmlPresetId.parse(id, 'Preset id')), repeatable: true };
}

export function deletePresetRequest(channel: number, id: number): XmlRequest {
  return { path: on('PtzDeletePreset', channel), xml: idDocument('presetInfo', xmlPresetId.parse(id, 'Preset id')) };
}

/** Saves the current position under `name`; the device picks the id. */
export function addPresetRequest(channel: number, name: string): XmlRequest {
  return { path: on('PtzAddPreset', channel), xml: buildDocument(INFO_VERSION, [xml.str('name', xmlPresetName.parse(name, 'Preset name'))], 'presetInfo') };
}

export function presetsRequest(channel: number): XmlRequest {
  return { path: on('PtzGetPresets', channel), repeatable: true };
}

export function cruisesRequest(channel: number): XmlRequest {
  return { path: on('PtzGetCruises', channel), repeatable: true };
}

export function runCruiseRequest(channel: number, id: number): XmlRequest {
  return { path: on('PtzRunCruise', channel), xml: idDocument('cruiseInfo', xmlCruiseId.parse(id, 'Tour')) };
}

export function stopCruiseRequest(channel: number): XmlRequest {
  return { path: on('PtzStopCruise', channel), repeatable: true };
}

/**
 * The entries of a `presetInfo` or `cruiseInfo` list: `<item id="1"><![CDATA[gate]]></item>`
 * (field notes), or items holding `id` and `name` elements. Items without a readable id are
 * skipped; at most `PTZ_LIST_MAX` are read.
 */
export function parsePtzList(root: XmlElement, listName: 'presetInfo' | 'cruiseInfo'): PtzListEntry[] {
  const list = root.name === listName ? root : child(root, listName);
  if (!list) throw new IpcamError('EPARSE', `The answer holds no ${listName} list`);
  const entries: PtzListEntry[] = [];
  for (const item of items(list).slice(0, PTZ_LIST_MAX)) {
    const idText = item.attrs['id'] ?? child(item, 'id')?.text ?? '';
    const id = /^\d{1,9}$/.test(idText.trim()) ? Number(idText) : undefined;
    if (id === undefined) continue;
    const name = (child(item, 'name')?.text ?? (item.children.length === 0 ? item.text : '')).slice(0, 256);
    entries.push({ id, name });
  }
  return entries;
}

/** Preset and tour (cruise) commands of the XML interface, spelled exactly as on the CGI side. */
export const XML_PTZ_COMMANDS = ['gotoPreset', 'savePreset', 'removePreset', 'listPresets', 'startTour', 'stopTour', 'listTours'] as const;
export type XmlPtzCommand = (typeof XML_PTZ_COMMANDS)[number];

/** One preset or tour command, checked: the command and the request its builder made of it. */
interface PresetCall {
  command: XmlPtzCommand;
  request: XmlRequest;
}

/**
 * `{ command, channel, id | name | tour }`, checked by the rules above as its request is made (a
 * preset a flow names is looked up to its id by the mover first).
 */
const presetCallParam = objectParam((f): PresetCall => {
  const channel = checkChannel(f['channel']);
  const command = XML_PTZ_COMMANDS.find((c) => c === f['command']);
  switch (command) {
    case 'gotoPreset':
      return { command, request: gotoPresetRequest(channel, xmlPresetId.parse(f['id'], 'Preset id')) };
    case 'removePreset':
      return { command, request: deletePresetRequest(channel, xmlPresetId.parse(f['id'], 'Preset id')) };
    case 'savePreset':
      return { command, request: addPresetRequest(channel, xmlPresetName.parse(f['name'], 'Preset name')) };
    case 'startTour':
      return { command, request: runCruiseRequest(channel, xmlCruiseId.parse(f['tour'], 'Tour')) };
    case 'stopTour':
      return { command, request: stopCruiseRequest(channel) };
    case 'listPresets':
      return { command, request: presetsRequest(channel) };
    case 'listTours':
      return { command, request: cruisesRequest(channel) };
    case undefined:
      throw inputError(`Unknown XML preset or tour command ${echo(f['command'])}: use one of ${XML_PTZ_COMMANDS.join(', ')}`);
  }
});

/**
 * A preset or tour command of the XML interface (PtzGotoPreset, PtzAddPreset, PtzDeletePreset,
 * PtzGetPresets, PtzRunCruise, PtzStopCruise, PtzGetCruises), on the control lane; a list
 * command gives the list, the others nothing.
 */
export const ptzPresetOp = defineOp({
  name: 'ptzPreset',
  api: 'xml',
  access: 'operator',
  class: 'change',
  summary: 'One preset or tour command of the XML interface (go to, save, remove, list; start, stop, list tours)',
  params: presetCallParam,
  request: (c) => ({ ...c.request, control: true }),
  parse: (root, c): { payload: PtzListEntry[] | undefined } => {
    if (c.command === 'listPresets') return { payload: parsePtzList(root, 'presetInfo') };
    if (c.command === 'listTours') return { payload: parsePtzList(root, 'cruiseInfo') };
    return { payload: undefined };
  },
});

/** The XML preset and tour calls of ipcam-ptz run as entries; not offered by ipcam-request. */
export const XML_PRESET_OPERATIONS: readonly Operation[] = [ptzPresetOp];
