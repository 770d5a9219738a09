import { echo } from '../lib/errors/echo';
import type { ActionOutput } from '../lib/node-spec';
import type { PlateResult } from '../lib/ops/plates';
import { platesDone } from '../lib/status/status';

/** A batch's results as its message; per-plate failures are one warning, never an error: the others went through. */
export function batchOutput(verb: 'added' | 'deleted', results: PlateResult[]): ActionOutput {
  const failed = results.filter((r) => !r.ok);
  // Plates may come from the device (a sync's removals): each is echoed short and on one line.
  const sample = failed.slice(0, 5).map((r) => `${echo(r.plate)} (${r.error ?? r.errorCode})`).join(', ');
  return {
    payload: results,
    status: platesDone(results.length - failed.length, results.length, verb),
    ...(failed.length > 0 && { warning: `${failed.length} of ${results.length} plates not ${verb}: ${sample}${failed.length > 5 ? ', ...' : ''}` }),
  };
}
