import { echo } from '../../lib/errors/echo';
import { syncPlates } from '../../lib/ops/plate-sync';
import { synced } from '../../lib/status/status';
import { registerActionNode, type ActionDef } from '../action';
import { spec } from './spec';
import type { NodeAPI } from '../red';

interface PlateSyncDef extends ActionDef {
  group?: string;
  dryRun?: boolean;
}

export = function register(RED: NodeAPI): void {
  registerActionNode<PlateSyncDef>(RED, spec, (node, def) => async (msg, client, signal) => {
    // A node without the setting (an older or hand-written flow) plans and changes nothing, as
    // a new node starts: removing plates takes a dry run switched off.
    const report = await syncPlates(client, msg.payload, { group: def.group || undefined, dryRun: def.dryRun !== false, signal });
    msg.payload = report;
    if (report.failed.length > 0) {
      node.warn(`${report.failed.length} plates could not be synced: ${report.failed.slice(0, 5).map((f) => `${echo(f.plate)} (${f.action}: ${f.error})`).join(', ')}`);
    }
    return synced({ added: report.added.length, modified: report.modified.length, removed: report.removed.length, failed: report.failed.length }, report.dryRun);
  });
};
