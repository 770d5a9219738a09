import { defineAction } from '../../lib/node-spec';
import { echo } from '../../lib/errors/echo';
import { bool } from '../../lib/input/params';
import { PLATE_FIELDS } from '../../lib/input/payload';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { syncPlates } from '../../lib/ops/plate-sync';
import { synced, ACTION_WORDS } from '../../lib/status/status';

export const spec = defineAction({
  type: 'ipcam-plate-sync',
  settings: { group: PLATE_GROUP, dryRun: bool() },
  // A plate-query's records are a desired list as they come (type and card are not synced).
  payloadItemKeys: [...PLATE_FIELDS, 'type', 'card'],
  status: ['synced', 'syncPlanned', 'syncPartly', ...ACTION_WORDS],
  // A node without the setting (an older or hand-written flow) plans and changes nothing, as a
  // new node starts: removing plates takes a dry run switched off.
  input: (payload, s) => ({ desired: payload, group: s.group || undefined, dryRun: s.dryRun !== false }),
  run: (client, { desired, ...opts }, { signal }) => syncPlates(client, desired, { ...opts, signal }),
  output: (report) => ({
    payload: report,
    status: synced({ added: report.added.length, modified: report.modified.length, removed: report.removed.length, failed: report.failed.length }, report.dryRun),
    ...(report.failed.length > 0 && { warning: `${report.failed.length} plates could not be synced: ${report.failed.slice(0, 5).map((f) => `${echo(f.plate)} (${f.action}: ${f.error})`).join(', ')}` }),
  }),
});
