/**
 * ipcam-ui-plates: the last plates on a Dashboard 2 page (time, plate, list type, camera,
 * crop), live; a click on a row sends that event on. Fed by ipcam-plate-event messages, by its
 * own event server (optionally only one device's posts: plate-event's filter and message, from
 * lib/events), or both; only the columns shown go to the browser (ui-plate-row.ts picks them). A browser may only watch and select a row
 * the server sent it (lib/widgets/actions): the event that goes out is the one stored, never the
 * browser's copy. The rows outlive a redeploy of the widget (see keptRows).
 */
import { senderFilter } from 'node-red-contrib-ipcam/dist/lib/events/filter';
import { plateMessage } from 'node-red-contrib-ipcam/dist/lib/events/plate-message';
import type { ReceivedPost } from 'node-red-contrib-ipcam/dist/lib/events/server';
import { badSetting, lastPlate, listenerState, noServer } from 'node-red-contrib-ipcam/dist/lib/status/status';
import { checkRows, WIDGET_ROWS_MAX } from 'node-red-contrib-ipcam/dist/lib/widgets/settings';
import { platesAction, refused } from 'node-red-contrib-ipcam/dist/lib/widgets/actions';
import type { DeviceConfigNode } from 'node-red-contrib-ipcam/dist/nodes/device-config';
import type { EventServerConfigNode } from 'node-red-contrib-ipcam/dist/nodes/event-config';
import { Clients, registerWidget, serverEvent, type DashboardConnection } from '../ui-dashboard';
import { plateRow, type PlateRow, type PlatesView } from '../ui-plate-row';
import type { Node, NodeAPI, NodeDef, NodeMessage } from 'node-red-contrib-ipcam/dist/nodes/red';

interface PlatesDef extends NodeDef {
  group?: string;
  server?: string;
  device?: string;
  count?: string | number;
  label?: string;
}

/** One row shown, with the event it came from (sent on when a client selects the row). */
interface KeptRow {
  id: number;
  row: PlateRow;
  msg: NodeMessage;
}

/**
 * The rows of each plates widget, by node id, kept across a redeploy: a module-level store,
 * not node context. Node context may be a user's file store, which would write every plate with
 * its crop (up to Rows x 512 kB) to disk at each plate, and rows from before a restart are stale
 * anyway. The store is bounded: each widget keeps at most its Rows (at most WIDGET_ROWS_MAX),
 * the store at most KEPT_WIDGETS widgets (the oldest written dropped first), and a widget removed
 * from the flows takes its rows with it.
 */
const keptRows = new Map<string, { rows: KeptRow[]; nextId: number }>();
/** Most widgets whose rows are kept. */
const KEPT_WIDGETS = 64;

function keptFor(id: string): { rows: KeptRow[]; nextId: number } {
  let kept = keptRows.get(id);
  if (kept) {
    // Re-inserted: the store drops the widget whose rows were taken longest ago first.
    keptRows.delete(id);
  } else {
    kept = { rows: [], nextId: 1 };
  }
  keptRows.set(id, kept);
  while (keptRows.size > KEPT_WIDGETS) {
    const oldest = keptRows.keys().next().value;
    if (oldest === undefined) break;
    keptRows.delete(oldest);
  }
  return kept;
}

export = function register(RED: NodeAPI): void {
  function IpcamUiPlatesNode(this: Node, def: PlatesDef): void {
    RED.nodes.createNode(this, def);
    plates(RED, this, def);
  }
  RED.nodes.registerType('ipcam-ui-plates', IpcamUiPlatesNode as (this: never, def: never) => void);
};

function plates(RED: NodeAPI, node: Node, def: PlatesDef): void {
  const event_ = serverEvent(node.id);
  // Rows kept and shown, as the dialog checks them: a bad setting starts nothing.
  let count: number;
  try {
    count = checkRows(def.count);
  } catch (err) {
    node.status(badSetting());
    node.error(err instanceof Error ? err.message : 'bad setting');
    return;
  }
  const config = def.server ? (RED.nodes.getNode(def.server) as EventServerConfigNode | null) : null;
  if (def.server && !config?.server) {
    node.status(config ? badSetting('server setting') : noServer());
    node.error(config?.problem ?? 'The event server of this widget is not deployed: choose an ipcam-event-server');
    return;
  }
  const deviceNode = def.device ? (RED.nodes.getNode(def.device) as DeviceConfigNode | null) : null;
  if (def.device && !config) node.warn('Device filters the plates of the Server setting: choose an ipcam-event-server too');
  /** Newest first; each row with the event it came from, sent on when its row is selected. */
  const kept = keptFor(node.id);
  const rows = kept.rows;
  rows.length = Math.min(rows.length, count, WIDGET_ROWS_MAX);
  if (rows[0]) node.status(lastPlate(rows[0].row.plate));
  const clients = new Clients(() => undefined);
  // A client gets the whole list when it starts showing the widget, then each new row alone.
  const view = (): PlatesView => ({ rows: rows.map(({ id, row }) => ({ id, ...row })), count });

  const onAction = (conn: DashboardConnection, msg: unknown): string | undefined => {
    const asked = platesAction(msg);
    if (refused(asked)) return asked.refused;
    switch (asked.action) {
      case 'watch':
        if (!clients.add(conn)) return 'too many viewers';
        conn.emit(event_, view());
        return undefined;
      case 'unwatch':
        clients.remove(conn);
        return undefined;
      case 'select': {
        if (!clients.has(conn)) return 'select from a client that does not show the widget';
        const hit = rows.find((r) => r.id === asked.row);
        if (!hit) return `row ${asked.row} is not on show`;
        node.send(RED.util.cloneMessage(hit.msg));
        return undefined;
      }
    }
  };
  const show = (event: NodeMessage, row: PlateRow): void => {
    const id = kept.nextId;
    rows.unshift({ id, row, msg: event });
    clients.emit(event_, { add: { id, ...row }, count } satisfies PlatesView);
    kept.nextId = (id % Number.MAX_SAFE_INTEGER) + 1;
    rows.length = Math.min(rows.length, count);
    if (rows[0]) node.status(lastPlate(rows[0].row.plate));
  };
  const onInput = (msg: NodeMessage): void => {
    const p = msg.payload;
    if (typeof p !== 'object' || p === null || typeof (p as Record<string, unknown>)['plate'] !== 'string') return;
    const { _msgid, ...event } = msg;
    void _msgid;
    show(event, plateRow(p));
  };

  // The device filter is plate-event's (see senderFilter).
  const wanted = senderFilter(deviceNode?.host);
  const onPost = (received: ReceivedPost): void => {
    for (const post of received.posts) {
      if (post.kind !== 'plate' || !wanted(post.device, received.remoteAddress)) continue;
      // plate-event's message with the crop as base64 (the scene picture is left out: the widget never shows it).
      const event = plateMessage(post, received.remoteAddress, 'base64', ['plate']);
      const row = plateRow(event.payload);
      // A crop too big to show is not kept for the click either: each row stays as small as its view.
      if (row.crop === undefined) event.payload.images = {};
      show(event, row);
    }
  };
  // Without Dashboard 2 the widget takes no part: it listens to no server either.
  const shown = registerWidget(RED, node, def, 'IpcamUiPlates', { onAction, onGone: () => undefined, onInput });
  const unsubscribe = !shown
    ? undefined
    : config?.server?.subscribe({
        onPost,
        onState: (state, detail) => {
          if (state === 'failed') node.status(listenerState('failed', detail));
        },
      });
  node.on('close', (removed, done) => {
    unsubscribe?.();
    clients.close();
    // Removed from the flows (not redeployed): its rows go with it.
    if (removed) keptRows.delete(node.id);
    done();
  });
}
