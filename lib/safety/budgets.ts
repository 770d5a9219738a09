import { IpcamError } from '../errors/errors';

/**
 * What one device answer, one field of a record and one walk of pages may cost (DESIGN, "Safety
 * rules": every answer has budgets). Each budget is written here once; beyond it a read ends with
 * EPARSE (one answer or field) or EDEVICE (a walk of pages), naming the budget, never with a
 * frozen or exhausted runtime. A worst device sends millions of elements, 100 KB fields and pages
 * forever: these bound what it can make us hold.
 */

/**
 * Elements one XML answer may hold. Device answers hold tens to a few thousand; events posts
 * hold about a hundred. Checked in the one pass over the text before the parser builds anything,
 * so a 4-million-element answer costs the scan of its first 10,000 elements.
 */
export const MAX_XML_ELEMENTS = 10_000;

/**
 * Bytes (UTF-8) one field of a device record may hold: a plate's number, owner or dates, an edge
 * record's name or times, a storage entry's name. Real fields are under 64 characters; a longer
 * one is a device that lies (EPARSE), not data to keep.
 */
export const MAX_RECORD_FIELD_BYTES = 1024;

/**
 * Bytes of record text one walk of pages may keep (a whole plate query or sync, an edge `all`
 * search, a storage listing). 100,000 plates of real sizes keep about 6 MB; beyond this the walk
 * ends with EDEVICE: a device sending big records forever cannot fill the heap.
 */
export const MAX_WALK_BYTES = 32 * 1024 * 1024;

/** What a record adds to a walk besides its text (the object and its string headers), counted as bytes. */
export const RECORD_OVERHEAD_BYTES = 128;

/**
 * A field of a device record, kept: at most `MAX_RECORD_FIELD_BYTES` (EPARSE beyond, naming the
 * record and field), and a string of its own. A value cut from an answer's text may be a slice
 * that keeps the whole answer alive (V8 makes substrings that point into their parent); a walk
 * keeping one field of each page would keep every page.
 */
export function recordField(value: string, what: string, field: string): string {
  // A UTF-8 byte is at most 3 per UTF-16 unit: short text needs no count.
  if (value.length * 3 > MAX_RECORD_FIELD_BYTES && Buffer.byteLength(value, 'utf8') > MAX_RECORD_FIELD_BYTES) {
    throw new IpcamError('EPARSE', `The device sent a ${what} whose ${field} is longer than ${MAX_RECORD_FIELD_BYTES} bytes (the field budget): it is not believed`);
  }
  return ownCopy(value);
}

/** A copy of `text` that shares no memory with the string it was cut from. Exact, lone surrogates included. */
export function ownCopy(text: string): string {
  return text === '' ? text : (JSON.parse(JSON.stringify(text)) as string);
}

/** The bytes of record text a walk of pages has kept, against `MAX_WALK_BYTES`. */
export class WalkBudget {
  private spent = 0;

  /** `what`: the walk in a user's words, e.g. `plate query`. */
  constructor(
    private readonly what: string,
    private readonly limit: number = MAX_WALK_BYTES,
  ) {}

  /** Counts one record of these fields; EDEVICE naming the budget once the walk keeps more. */
  spend(fields: readonly string[]): void {
    let bytes = RECORD_OVERHEAD_BYTES;
    for (const field of fields) bytes += field.length;
    this.spent += bytes;
    if (this.spent > this.limit) {
      throw new IpcamError('EDEVICE', `The ${this.what} stopped: the device sent more than ${Math.round(this.limit / 1048576)} MiB of records (the walk budget) without reaching the end`);
    }
  }
}
