/** The simulated on-device plate database and plate recognition settings, with the spec's rules. */
import type { PlateRecord } from '../ops/plates';

/** A stored plate has the fields the interface reads back. */
export type StoredPlate = PlateRecord;

export interface VehicleSettings {
  /** `2.0` answers with dedup and alarm mode, `1.x` without, `2.1` refuses the old command. */
  api: '1.x' | '2.0' | '2.1';
  enabled: boolean;
  sensitivity: number;
  region: string;
  saveTargetPicture: boolean;
  saveSourcePicture: boolean;
  dedupEnabled: boolean;
  dedupInterval: number;
  zone: { X1: number; Y1: number; X2: number; Y2: number };
  alarmMode: string;
}

export const REGIONS: ReadonlyArray<{ name: string; continent: string }> = [
  { name: 'U.S.A', continent: 'NorthAmerica' },
  { name: 'Canada', continent: 'NorthAmerica' },
  { name: 'Germany', continent: 'Europe' },
  { name: 'Britain', continent: 'Europe' },
];
export const ALARM_LISTS = ['blackList', 'whiteList', 'strangerList'];
export const ALARM_MODES = ['plateOnly'];
/** Coordinates of the detection zone run over this square (the spec leaves bounds open). */
export const ZONE_MAX = 10_000;

export class PlateDb {
  private readonly plates = new Map<string, StoredPlate>();
  /** Most plates the device holds; one more is refused with 202 (library full). */
  capacity: number;
  /** GetLicensePlates declares `total` (firmware that does not makes clients page until a short page). */
  sendTotal = true;
  /** Firmware that ignores `resultOffset`: every GetLicensePlates answers the first page. */
  ignoreOffset = false;
  /** A `total` declared instead of the real count (e.g. 4294967295, as such firmware sends). */
  bogusTotal: number | undefined = undefined;

  constructor(capacity = 50_000) {
    this.capacity = capacity;
  }

  get size(): number {
    return this.plates.size;
  }

  get(plate: string, group: string): StoredPlate | undefined {
    return this.plates.get(key(plate, group));
  }

  /** Error code of adding one plate: 0, 203 duplicate, 202 full, 201 unreadable. */
  add(plate: string, group: string, now = new Date()): number {
    if (plate.trim() === '' || group.trim() === '') return 201;
    if (this.plates.has(key(plate, group))) return 203;
    if (this.plates.size >= this.capacity) return 202;
    const begin = formatDateTime(now);
    const end = formatDateTime(new Date(Date.UTC(now.getUTCFullYear() + 10, now.getUTCMonth(), now.getUTCDate(), 23, 59, 59)));
    this.plates.set(key(plate, group), { plate, group, begin, end, type: '', owner: '', card: '', phone: '' });
    return 0;
  }

  remove(plate: string, group: string): boolean {
    return this.plates.delete(key(plate, group));
  }

  inGroup(group: string): StoredPlate[] {
    return [...this.plates.values()].filter((p) => p.group === group);
  }

  all(): StoredPlate[] {
    return [...this.plates.values()];
  }

  clear(): void {
    this.plates.clear();
  }

  /** How GetLicensePlates pages, as the control API shows and sets it. */
  get paging(): PlatePaging {
    return { sendTotal: this.sendTotal, ignoreOffset: this.ignoreOffset, bogusTotal: this.bogusTotal ?? null };
  }

  setPaging(next: Partial<PlatePaging>): void {
    if (next.sendTotal !== undefined) this.sendTotal = next.sendTotal;
    if (next.ignoreOffset !== undefined) this.ignoreOffset = next.ignoreOffset;
    if (next.bogusTotal !== undefined) this.bogusTotal = next.bogusTotal ?? undefined;
  }
}

export interface PlatePaging {
  sendTotal: boolean;
  ignoreOffset: boolean;
  /** null: the real count. */
  bogusTotal: number | null;
}

function key(plate: string, group: string): string {
  return `${group}\u0000${plate}`;
}

export function formatDateTime(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
}

export function initialVehicleSettings(): VehicleSettings {
  return {
    api: '2.0',
    enabled: true,
    sensitivity: 50,
    region: 'Germany',
    saveTargetPicture: true,
    saveSourcePicture: false,
    dedupEnabled: true,
    dedupInterval: 5,
    zone: { X1: 1000, Y1: 2000, X2: 9000, Y2: 8000 },
    alarmMode: 'plateOnly',
  };
}
