/**
 * ipcam-ui-plates: the last plates on a Dashboard 2 page (time, plate, list type, camera,
 * crop), live; a click on a row sends that event on. Fed by ipcam-plate-event messages; only
 * the columns shown go to the browser (lib-free: ui-plate-row.ts picks them).
 */
import { checkRows } from '../lib/widget-settings';
import { Clients, registerWidget, serverEvent, type ClientMessage, type DashboardConnection } from './ui-dashboard';
import { plateRow, type PlateRow } from './ui-plate-row';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './red';

interface PlatesDef extends NodeDef {
  group?: string;
  count?: string | number;
  label?: string;
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
    node.status({ fill: 'red', shape: 'ring', text: 'bad setting' });
    node.error(err instanceof Error ? err.message : 'bad setting');
    return;
  }
  /** Newest first; each row with the event it came from, sent on when its row is clicked. */
  const rows: Array<{ id: number; row: PlateRow; msg: NodeMessage }> = [];
  let nextId = 1;
  const clients = new Clients(() => undefined);
  // A client gets the whole list when it starts showing the widget, then each new row alone.
  const view = (): { rows: Array<PlateRow & { id: number }>; count: number } => ({ rows: rows.map(({ id, row }) => ({ id, ...row })), count });

  const onClient = (conn: DashboardConnection, msg: ClientMessage): void => {
    if (msg.kind === 'watch') {
      if (clients.add(conn)) conn.emit(event_, view());
    } else if (msg.kind === 'unwatch') {
      clients.remove(conn);
    } else if (msg.kind === 'click' && clients.has(conn)) {
      const hit = rows.find((r) => r.id === msg['id']);
      if (hit) node.send(RED.util.cloneMessage(hit.msg));
    }
  };
  const onInput = (msg: NodeMessage): void => {
    const p = msg.payload;
    if (typeof p !== 'object' || p === null || typeof (p as Record<string, unknown>)['plate'] !== 'string') return;
    const { _msgid, ...event } = msg;
    void _msgid;
    const row = plateRow(p as Record<string, unknown>);
    rows.unshift({ id: nextId, row, msg: event });
    clients.emit(event_, { add: { id: nextId, ...row }, count });
    nextId = (nextId % Number.MAX_SAFE_INTEGER) + 1;
    rows.length = Math.min(rows.length, count);
    node.status({ fill: 'green', shape: 'dot', text: `${rows[0]?.row.plate ?? ''}`.slice(0, 20) });
  };
  registerWidget(RED, node, def, 'IpcamUiPlates', { onClient, onGone: () => undefined, onInput });
  node.on('close', (_removed, done) => {
    clients.close();
    done();
  });
}
