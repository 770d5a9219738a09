import { IpcamError, inputError } from '../errors/errors';
import type { DeviceClient } from '../transport/client';
import { checkGroup, checkPlate, checkPlateNumber, type CheckedPlate } from './plate-input';
import { addPlates, deletePlates, MAX_PLATES, modifyPlate, plateError, queryPlates, type PlateRecord, type PlateResult } from './plates';

/** What a sync did (or, on a dry run, would do), as plate numbers. */
export interface SyncReport {
  added: string[];
  modified: string[];
  removed: string[];
  unchanged: string[];
  failed: Array<{ plate: string; action: 'add' | 'modify' | 'remove'; errorCode: number; error: string }>;
  dryRun: boolean;
}

export interface SyncPlan {
  group: string;
  add: CheckedPlate[];
  modify: CheckedPlate[];
  remove: CheckedPlate[];
  unchanged: CheckedPlate[];
}

/**
 * The fewest changes that make `existing` equal `desired` in one group. A desired plate that names
 * no owner, phone or date leaves those fields as they are on the device.
 */
export function planSync(group: string, desired: CheckedPlate[], existing: PlateRecord[]): SyncPlan {
  const plan: SyncPlan = { group, add: [], modify: [], remove: [], unchanged: [] };
  const onDevice = new Map(existing.map((r) => [r.plate, r]));
  const wanted = uniquePlates(desired);
  for (const plate of desired) {
    const record = onDevice.get(plate.plate);
    if (!record) plan.add.push(plate);
    else if (differs(plate, record)) plan.modify.push(plate);
    else plan.unchanged.push(plate);
  }
  for (const record of existing) if (!wanted.has(record.plate)) plan.remove.push({ plate: record.plate, group });
  return plan;
}

/** The plate numbers of the list; a plate listed twice is `EINPUT`. */
function uniquePlates(desired: CheckedPlate[]): Set<string> {
  const seen = new Set<string>();
  for (const plate of desired) {
    if (seen.has(plate.plate)) throw inputError(`Plate ${plate.plate} is listed twice`);
    seen.add(plate.plate);
  }
  return seen;
}

function differs(plate: CheckedPlate, record: PlateRecord): boolean {
  return (
    (plate.owner !== undefined && plate.owner !== record.owner) ||
    (plate.phone !== undefined && plate.phone !== record.phone) ||
    (plate.begin !== undefined && plate.begin !== record.begin) ||
    (plate.end !== undefined && plate.end !== record.end)
  );
}

/** Makes one group of the device's database equal the desired list (plates or records). */
export async function syncPlates(client: DeviceClient, input: unknown, opts: { group?: string; dryRun?: boolean; signal?: AbortSignal } = {}): Promise<SyncReport> {
  const group = checkGroup(opts.group);
  if (!Array.isArray(input)) throw inputError('The desired plates must be a list');
  if (input.length > MAX_PLATES) throw inputError(`The desired list has ${input.length} plates; no device holds more than ${MAX_PLATES}`);
  const desired = input.map((entry) => checkPlate(entry, group));
  const stray = desired.find((p) => p.group !== group);
  if (stray) throw inputError(`Plate ${stray.plate} is in group ${stray.group}; a sync covers group ${group} only`);
  // Checked before the query: EINPUT means nothing was sent.
  uniquePlates(desired);

  const { plates: existing } = await queryPlates(client, { group }, { signal: opts.signal });
  const plan = planSync(group, desired, existing);
  const report: SyncReport = { added: [], modified: [], removed: [], unchanged: plan.unchanged.map((p) => p.plate), failed: [], dryRun: opts.dryRun === true };
  // A plate on the device that this library would not send (another client stored it) cannot be
  // named in a delete: it is reported as failed, not sent, and the rest of the sync goes on.
  const removable = plan.remove.filter((plate) => {
    const problem = unsendable(plate.plate);
    if (problem !== undefined) report.failed.push({ plate: plate.plate, action: 'remove', errorCode: -1, error: problem });
    return problem === undefined;
  });
  if (report.dryRun) {
    report.added = plan.add.map((p) => p.plate);
    report.modified = plan.modify.map((p) => p.plate);
    report.removed = removable.map((p) => p.plate);
    return report;
  }
  // Removals first: a nearly full library must have room for the additions.
  if (removable.length > 0) collect(report, 'remove', report.removed, await deletePlates(client, removable, { group, signal: opts.signal }));
  if (plan.add.length > 0) collect(report, 'add', report.added, await addPlates(client, plan.add, { group, signal: opts.signal }));
  for (const plate of plan.modify) {
    try {
      await modifyPlate(client, plate, { signal: opts.signal });
      report.modified.push(plate.plate);
    } catch (err) {
      if (!plateError(err)) throw err;
      report.failed.push({ plate: plate.plate, action: 'modify', errorCode: err.deviceCode ?? -1, error: err.message });
    }
  }
  return report;
}

/** Why a plate number read from the device cannot be sent back, or undefined when it can. */
function unsendable(plate: string): string | undefined {
  try {
    checkPlateNumber(plate);
    return undefined;
  } catch (err) {
    if (err instanceof IpcamError) return `Not removed: ${err.message}`;
    throw err;
  }
}

function collect(report: SyncReport, action: 'add' | 'remove', done: string[], results: PlateResult[]): void {
  for (const r of results) {
    if (r.ok) done.push(r.plate);
    else report.failed.push({ plate: r.plate, action, errorCode: r.errorCode, error: r.error ?? '' });
  }
}

