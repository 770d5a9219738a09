import { echo } from '../lib/errors/echo';
import type { PlateResult } from '../lib/ops/plates';
import { platesDone, type Status } from '../lib/status/status';
import type { Node } from './red';

/** Per-plate failures are one warning for the batch, never an error: the others went through. */
export function reportBatch(node: Node, verb: 'added' | 'deleted', results: PlateResult[]): Status {
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0) {
    // Plates may come from the device (a sync's removals): each is echoed short and on one line.
    const sample = failed.slice(0, 5).map((r) => `${echo(r.plate)} (${r.error ?? r.errorCode})`).join(', ');
    node.warn(`${failed.length} of ${results.length} plates not ${verb}: ${sample}${failed.length > 5 ? ', ...' : ''}`);
  }
  return platesDone(results.length - failed.length, results.length, verb);
}
