import { recordField, WalkBudget } from '../safety/budgets';
import { IpcamError, inputError } from '../errors/errors';
import { checkWhole, objectParam } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { runOp } from './runner';
import { defineOp, type OpContext, type Operation } from './types';
import { buildDocument, child, items, xml, type XmlElement, type XmlNode } from '../xml/codec';
import { deviceErrorText } from '../xml/device-errors';
import { checkGroup, checkPlate, checkPlateList, hasDetails, MAX_PLATES, type CheckedPlate, type PlateInput } from './plate-input';

/** A plate as the device stores it. */
export interface PlateRecord {
  plate: string;
  group: string;
  begin: string;
  end: string;
  type: string;
  owner: string;
  card: string;
  phone: string;
}

/** The outcome for one plate of a batch: failures are reported per plate, not thrown. */
export interface PlateResult {
  plate: string;
  group: string;
  ok: boolean;
  errorCode: number;
  error?: string;
}

export interface PlateQuery {
  group?: string;
  /** Plates to skip (0-based; sent as the device's 1-based `resultOffset`). */
  offset?: number;
  /** Most plates to return; absent = every page until the device's `total`. */
  limit?: number;
}

interface CallOptions {
  signal?: AbortSignal;
}

export interface QueryOptions extends CallOptions {
  /** Most pages to read before giving up with EDEVICE: at most (and by default) `MAX_PAGES`. */
  maxPages?: number;
}

interface BatchOptions extends CallOptions {
  /** Group of entries that name none (default `'1'`). */
  group?: string;
}

/** AddLicensePlates takes at most this many items (`maxCount`). */
export const MAX_PLATES_PER_ADD = 100;
/** Page size for reading the whole database. */
export const QUERY_PAGE = 100;
/**
 * Plates one GetLicensePlates answer may hold: a device that ignores `maxResult` sends a page of
 * its own size (up to 1000 seen in the field); the plates beyond the asked count are not read.
 */
export const MAX_PAGE_PLATES = 1000;
/** Elements of one plate item: the item and its eight fields, with room for a few more. */
const PLATE_ITEM_ELEMENTS = 16;
/** The element budget of one page answer: more than the codec's default, as a 1000-plate page holds. */
export const PLATE_PAGE_MAX_ELEMENTS = MAX_PAGE_PLATES * PLATE_ITEM_ELEMENTS + 64;
/**
 * The byte budget of one page answer: 1000 plates with every field at `MAX_RECORD_FIELD_BYTES`
 * (1000 plates of real sizes are under 1 MB).
 */
export const PLATE_PAGE_MAX_BYTES = 16 * 1024 * 1024;
const PLATE_VERSION = '2.1.0';
const CODE_EXISTS = 203;
/** Codes that concern one plate (range error, plate library errors); anything else fails the whole call. */
const PLATE_CODES = new Set([16, 201, 202, 203, 204, 205, 206, 207]);

/** A device error about one plate (reported per plate), not about the whole call. */
export function plateError(err: unknown): err is IpcamError {
  return err instanceof IpcamError && err.code === 'EDEVICE' && PLATE_CODES.has(err.deviceCode ?? -1);
}
const CODE_NO_RESOURCES = 20;

export interface AddOptions extends BatchOptions {
  /** Modify plates that already exist (code 203) instead of failing them. */
  upsert?: boolean;
}

/**
 * Adds any number of plates, 100 per request, each reply item mapped back to its plate by
 * `index`. Owner, phone and validity dates are set with a follow-up ModifyLicensePlate.
 */
export const addPlatesOp = defineOp({
  name: 'addPlates',
  api: 'xml',
  access: 'admin',
  class: 'change',
  summary: 'Adds plates to the plate database, 100 per request; results per plate',
  params: objectParam((v) => ({ plates: checkPlateList(v['plates'], v['group'] as string | undefined), upsert: v['upsert'] === true })),
  async run(ctx, p) {
    const results: PlateResult[] = [];
    for (let start = 0; start < p.plates.length; start += MAX_PLATES_PER_ADD) {
      const batch = p.plates.slice(start, start + MAX_PLATES_PER_ADD);
      const codes = await addBatch(ctx, batch);
      for (const [i, plate] of batch.entries()) {
        const code = codes.get(i + 1);
        results.push(await settleAdded(ctx, plate, code, p.upsert));
      }
    }
    return { payload: results };
  },
});

export function addPlates(client: DeviceClient, input: unknown, opts: AddOptions = {}): Promise<PlateResult[]> {
  return runOp(client, addPlatesOp, { plates: input, group: opts.group, upsert: opts.upsert }, { signal: opts.signal });
}

async function addBatch(ctx: OpContext, batch: CheckedPlate[]): Promise<Map<number, number>> {
  const body = buildDocument(PLATE_VERSION, [
    xml.list(
      'licensePlates',
      batch.map((p, i) => [xml.uint('index', i + 1), xml.str('licensePlateNumber', p.plate), xml.str('groupId', p.group)]),
      MAX_PLATES_PER_ADD,
    ),
  ]);
  const root = await ctx.xml({ path: '/AddLicensePlates', xml: body });
  const codes = new Map<number, number>();
  for (const item of items(child(root, 'licensePlatesReply'))) {
    const index = Number(child(item, 'index')?.text);
    const code = Number(child(item, 'errorCode')?.text);
    if (Number.isInteger(index) && Number.isInteger(code)) codes.set(index, code);
  }
  return codes;
}

async function settleAdded(ctx: OpContext, plate: CheckedPlate, code: number | undefined, upsert: boolean): Promise<PlateResult> {
  if (code === undefined) return failed(plate, -1, 'The device sent no reply for this plate');
  const exists = code === CODE_EXISTS && upsert;
  if (code !== 0 && !exists) return failed(plate, code, deviceErrorText(code));
  if (!hasDetails(plate)) return succeeded(plate);
  try {
    await modifyOne(ctx, plate);
    return succeeded(plate);
  } catch (err) {
    if (!plateError(err)) throw err;
    return failed(plate, err.deviceCode ?? -1, `${exists ? 'Exists' : 'Added'}, but setting its details failed: ${err.message}`);
  }
}

function succeeded(plate: CheckedPlate): PlateResult {
  return { plate: plate.plate, group: plate.group, ok: true, errorCode: 0 };
}

function failed(plate: CheckedPlate, errorCode: number, error: string): PlateResult {
  return { plate: plate.plate, group: plate.group, ok: false, errorCode, error };
}

export { MAX_PLATES } from './plate-input';
/** Pages a whole read may take (the cap that ends paging against a device that never ends it). */
export const MAX_PAGES = Math.ceil(MAX_PLATES / QUERY_PAGE);

/**
 * Reads plates of a group: one page for a given `limit`, else every page up to `total`. Paging
 * ends on an empty or short page or at the declared total; a page starting with the plate the
 * previous one started with (a device ignoring `resultOffset`) or more than `maxPages` pages is
 * EDEVICE, never a loop. Every field is held to `MAX_RECORD_FIELD_BYTES` (EPARSE beyond) and the
 * plates kept to the walk budget `MAX_WALK_BYTES` (EDEVICE beyond).
 */
export const queryPlatesOp = defineOp({
  name: 'queryPlates',
  api: 'xml',
  access: 'admin',
  class: 'read',
  summary: 'Reads the plates of a group, page by page up to the total (or a limit)',
  params: objectParam((v) => {
    const query = (typeof v['query'] === 'object' && v['query'] !== null ? v['query'] : {}) as PlateQuery;
    const maxPages = checkWhole(v['maxPages'] ?? MAX_PAGES, 'maxPages', 1, MAX_PAGES);
    const group = checkGroup(query.group);
    const offset = checkWhole(query.offset ?? 0, 'offset', 0, MAX_PLATES);
    const limit = query.limit === undefined ? undefined : checkWhole(query.limit, 'limit', 1, MAX_PLATES);
    return { maxPages, group, offset, limit };
  }),
  async run(ctx, { maxPages, group, offset, limit }) {
    const plates: PlateRecord[] = [];
    const budget = new WalkBudget('read of the plate list');
    let total: number | undefined;
    let previousFirst: string | undefined;
    let previousOffset = 0;
    for (let pages = 0; ; pages++) {
      if (pages >= maxPages) throw tooManyPages(maxPages);
      const wanted = limit === undefined ? QUERY_PAGE : Math.min(QUERY_PAGE, limit - plates.length);
      const resultOffset = offset + plates.length + 1;
      // A device that ignores maxResult: the rest of its page is read as the next page.
      const page = await queryPage(ctx, group, resultOffset, wanted, pages === 0);
      const got = page.plates;
      if (page.total !== undefined) total = page.total;
      if (got.length === 0) break;
      // A page starting where the one before started is the device going back, not paging on.
      const first = `${got[0]?.group}\u0000${got[0]?.plate}`;
      if (first === previousFirst) throw repeatedPage(resultOffset, previousOffset);
      previousFirst = first;
      previousOffset = resultOffset;
      for (const plate of got) {
        budget.spend(Object.values(plate));
        plates.push(plate);
      }
      // Without a declared total, a full page means there may be more.
      const more = total === undefined ? got.length === wanted : offset + plates.length < total;
      if (!more || (limit !== undefined && plates.length >= limit)) break;
    }
    return { payload: { plates, total: total ?? offset + plates.length } };
  },
});

export function queryPlates(client: DeviceClient, query: PlateQuery = {}, opts: QueryOptions = {}): Promise<{ plates: PlateRecord[]; total: number }> {
  return runOp(client, queryPlatesOp, { query, maxPages: opts.maxPages }, { signal: opts.signal });
}

function repeatedPage(resultOffset: number, previousOffset: number): IpcamError {
  return new IpcamError(
    'EDEVICE',
    `The device answered resultOffset ${resultOffset} with the plates it sent for resultOffset ${previousOffset}: it ignores resultOffset, so its plate list cannot be read page by page`,
  );
}

function tooManyPages(maxPages: number): IpcamError {
  const why = maxPages === MAX_PAGES ? `${MAX_PLATES} plates, more than any plate library holds` : `the most this read allows`;
  return new IpcamError('EDEVICE', `The device sent ${maxPages} pages of plates (${why}) without reaching the end: it ignores resultOffset or sends too many pages`);
}

async function queryPage(ctx: OpContext, group: string, resultOffset: number, maxResult: number, first: boolean): Promise<{ plates: PlateRecord[]; total?: number }> {
  const body = buildDocument(PLATE_VERSION, [
    xml.el('searchFilter', [xml.uint('maxResult', maxResult), xml.uint('resultOffset', resultOffset), xml.str('groupId', group)]),
  ]);
  let root: XmlElement;
  try {
    root = await ctx.xml({ path: '/GetLicensePlates', xml: body, maxBytes: PLATE_PAGE_MAX_BYTES, maxElements: PLATE_PAGE_MAX_ELEMENTS });
  } catch (err) {
    // Spec: an empty database answers errorCode 20; that is an empty list, not a failure. After
    // the first page it only says there is nothing more, not that the group is empty.
    if (err instanceof IpcamError && err.code === 'EDEVICE' && err.deviceCode === CODE_NO_RESOURCES) return first ? { plates: [], total: 0 } : { plates: [] };
    throw err;
  }
  const list = child(root, 'licensePlates');
  // Only the plates asked for are read: the rest of an oversized page is never copied.
  const plates = items(list).slice(0, maxResult).map(toRecord);
  return { plates, ...declaredTotal(list?.attrs['total']) };
}

/** A `total` within what a device can hold; anything else (absent, `4294967295`) declares nothing. */
function declaredTotal(text: string | undefined): { total?: number } {
  if (text === undefined || !/^\d{1,10}$/.test(text.trim())) return {};
  const total = Number(text.trim());
  return total <= MAX_PLATES ? { total } : {};
}

/** A plate of an answer, each field within its budget and a string of its own (never a slice of the page). */
function toRecord(item: XmlElement): PlateRecord {
  const text = (name: string): string => recordField(child(item, name)?.text ?? '', 'plate', name);
  return {
    plate: text('licensePlateNumber'),
    group: text('groupId'),
    begin: text('beginTime'),
    end: text('endTime'),
    type: text('licensePlateType'),
    owner: text('carOwner'),
    card: text('cardNumber'),
    phone: text('telephone'),
  };
}

/** Changes owner, phone and validity dates of an existing plate (every element `type="string"`). */
async function modifyOne(ctx: OpContext, plate: CheckedPlate): Promise<{ plate: string; group: string; ok: true }> {
  const fields: XmlNode[] = [xml.str('licensePlateNumber', plate.plate), xml.str('groupId', plate.group)];
  if (plate.owner !== undefined) fields.push(xml.str('carOwner', plate.owner));
  if (plate.phone !== undefined) fields.push(xml.str('telephone', plate.phone));
  if (plate.begin !== undefined) fields.push(xml.str('beginTime', plate.begin));
  if (plate.end !== undefined) fields.push(xml.str('endTime', plate.end));
  await ctx.xml({ path: '/ModifyLicensePlate', xml: buildDocument(PLATE_VERSION, [xml.el('licensePlate', fields)]) });
  return { plate: plate.plate, group: plate.group, ok: true };
}

export const modifyPlateOp = defineOp({
  name: 'modifyPlate',
  api: 'xml',
  access: 'admin',
  class: 'change',
  summary: 'Changes owner, phone and validity dates of a plate',
  params: objectParam((v) => {
    const plate = checkPlate(v['plate']);
    if (!hasDetails(plate)) throw inputError(`Plate ${plate.plate}: nothing to modify (give owner, phone, begin or end)`);
    return plate;
  }),
  run: async (ctx, plate) => ({ payload: await modifyOne(ctx, plate) }),
});

export function modifyPlate(client: DeviceClient, input: unknown, opts: CallOptions = {}): Promise<{ plate: string; group: string; ok: true }> {
  return runOp(client, modifyPlateOp, { plate: input }, { signal: opts.signal });
}

/** Deletes plates one request each (the interface has no batch delete); failures per plate. */
export const deletePlatesOp = defineOp({
  name: 'deletePlates',
  api: 'xml',
  access: 'admin',
  class: 'destructive',
  summary: 'Deletes plates from the plate database, one request each; results per plate',
  // Only number and group identify a plate: records read back from the device may be given as they are.
  params: objectParam((v) => checkPlateList(v['plates'], v['group'] as string | undefined).map(({ plate, group }) => ({ plate, group }))),
  async run(ctx, plates) {
    const results: PlateResult[] = [];
    for (const plate of plates) results.push(await deleteOne(ctx, plate));
    return { payload: results };
  },
});

/** The plate database calls of the plate nodes, run by the one runner; not offered by ipcam-request. */
export const PLATE_OPERATIONS: readonly Operation[] = [addPlatesOp, queryPlatesOp, modifyPlateOp, deletePlatesOp];

export function deletePlates(client: DeviceClient, input: unknown, opts: BatchOptions = {}): Promise<PlateResult[]> {
  return runOp(client, deletePlatesOp, { plates: input, group: opts.group }, { signal: opts.signal });
}

async function deleteOne(ctx: OpContext, plate: CheckedPlate): Promise<PlateResult> {
  const body = buildDocument(PLATE_VERSION, [xml.el('deleteAction', [xml.str('licensePlateNumber', plate.plate), xml.str('groupId', plate.group)])]);
  try {
    await ctx.xml({ path: '/DeleteLicensePlate', xml: body });
    return succeeded(plate);
  } catch (err) {
    if (!plateError(err)) throw err;
    return failed(plate, err.deviceCode ?? -1, err.message);
  }
}

export type { PlateInput };
