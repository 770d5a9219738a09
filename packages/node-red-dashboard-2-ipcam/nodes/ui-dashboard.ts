/**
 * What the two dashboard widgets share: registering with a Dashboard 2 group (the API of
 * @flowfuse/node-red-dashboard 1.31, an optional peer), the socket event their Vue components
 * talk on, and the clients that show a widget now.
 *
 * A component's messages come as Dashboard 2 `widget-action`s of the form `{ ipcam: { kind, ... } }`
 * and are taken by this package's dashboard plugin (ipcam-ui-plugin.ts) with the connection they
 * came on, before Dashboard 2 would pass them to the flow. Dashboard 2's `evts.onSocket` is not
 * used: it binds only connections opened after the widget registered, and a client that
 * reconnects during a redeploy would be left unheard.
 */
import type { Node, NodeAPI, NodeDef, NodeMessage, SendFn } from 'node-red-contrib-ipcam/dist/nodes/red';

/** Where the server answers one widget: `ipcam-ui:<widget id>`. */
export const serverEvent = (id: string): string => `ipcam-ui:${id}`;

type ClientHandler = (conn: DashboardConnection, msg: ClientMessage) => void;
/** The deployed widgets of this package, by node id: where the plugin routes their clients' messages. */
const widgets = new Map<string, ClientHandler>();

/**
 * A `widget-action` of a client (Dashboard 2's plugin hook `onAction`): a message of one of this
 * package's widgets is handled here and goes no further (null); any other passes unchanged.
 */
export function routeAction(conn: DashboardConnection, id: unknown, msg: unknown): unknown {
  const handler = typeof id === 'string' ? widgets.get(id) : undefined;
  if (!handler) return msg;
  const inner = typeof msg === 'object' && msg !== null ? (msg as Record<string, unknown>)['ipcam'] : undefined;
  if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) handler(conn, inner as ClientMessage);
  return null;
}

/** What a user installs for the widgets to work. */
const DASHBOARD_PACKAGE = '@flowfuse/node-red-dashboard';

/** A Socket.IO connection of a dashboard client, as far as a widget uses it. */
export interface DashboardConnection {
  id: string;
  emit(event: string, ...args: unknown[]): boolean;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

/** A message a component sent, as received: checked by the widget before use. */
export type ClientMessage = Record<string, unknown> & { kind?: unknown };

interface WidgetEvents {
  onAction: boolean;
  beforeSend: (msg: NodeMessage) => Promise<NodeMessage> | NodeMessage;
  onInput: (msg: NodeMessage, send: SendFn) => void;
}

interface UiGroup {
  register(node: Node, config: NodeDef, events: WidgetEvents): void;
}

export interface WidgetGlue {
  /** Handles one message from a client of this widget (already matched to its id). */
  onClient(conn: DashboardConnection, msg: ClientMessage): void;
  /** A client that showed this widget is gone (tab closed, network lost) or unmounted it. */
  onGone(conn: DashboardConnection): void;
  /**
   * A flow's message: handled here, never passed to the clients as it came (a plate event
   * holds the device's address). Throwing makes it an error of the node (Catch).
   */
  onInput(msg: NodeMessage): void;
}

/** Most clients a widget follows at once (each costs one listener on its connection). */
export const MAX_CLIENTS = 256;

/**
 * The clients that show one widget, each with a listener for its disconnection; bounded, and
 * released on close.
 */
export class Clients {
  private readonly conns = new Map<string, { conn: DashboardConnection; gone: () => void }>();

  constructor(private readonly onGone: (conn: DashboardConnection) => void) {}

  /** False when full: that client gets nothing. */
  add(conn: DashboardConnection): boolean {
    if (this.conns.has(conn.id)) return true;
    if (this.conns.size >= MAX_CLIENTS) return false;
    const gone = (): void => {
      this.conns.delete(conn.id);
      this.onGone(conn);
    };
    conn.on('disconnect', gone);
    this.conns.set(conn.id, { conn, gone });
    return true;
  }

  remove(conn: DashboardConnection): void {
    const entry = this.conns.get(conn.id);
    if (!entry) return;
    conn.off('disconnect', entry.gone);
    this.conns.delete(conn.id);
  }

  has(conn: DashboardConnection): boolean {
    return this.conns.has(conn.id);
  }

  get size(): number {
    return this.conns.size;
  }

  emit(event: string, data: unknown): void {
    for (const { conn } of this.conns.values()) conn.emit(event, data);
  }

  close(): void {
    for (const { conn, gone } of this.conns.values()) conn.off('disconnect', gone);
    this.conns.clear();
  }
}

/**
 * Registers the widget with its Dashboard 2 group. Without Dashboard 2 (no group node of that
 * kind) the node says so in its status and takes no part: the rest of the flows run as before.
 * Returns false then. `_component` is unused: Dashboard 2 takes the component's name from this
 * package's package.json.
 */
export function registerWidget(RED: NodeAPI, node: Node, def: NodeDef & { group?: string }, _component: string, glue: WidgetGlue): boolean {
  const group = (def.group ? RED.nodes.getNode(def.group) : null) as Partial<UiGroup> | null;
  if (!group || typeof group.register !== 'function') {
    // Without Dashboard 2 the editor has no group to offer: the empty setting says what is missing too.
    node.status({ fill: 'red', shape: 'ring', text: def.group ? 'needs Dashboard 2' : 'needs a Dashboard 2 group' });
    // Once per deploy, in the log and the debug sidebar: a status alone is easily missed.
    node.warn(
      def.group
        ? `its dashboard group is not deployed: this widget needs Dashboard 2 (${DASHBOARD_PACKAGE}) and does nothing without it`
        : `no dashboard group chosen: this widget needs Dashboard 2 (${DASHBOARD_PACKAGE}) and one of its groups, and does nothing without them`,
    );
    node.on('input', (_msg, _send, done) => done());
    return false;
  }
  let closed = false;
  const events: WidgetEvents = {
    onAction: false,
    // Runs before Dashboard passes an input to every client: what goes on is an empty message,
    // the widget's own events carry what its clients need.
    beforeSend: (msg) => {
      glue.onInput(msg);
      return {};
    },
    onInput: () => undefined,
  };
  const handler: ClientHandler = (conn, msg) => {
    if (closed) return;
    try {
      glue.onClient(conn, msg);
    } catch (err) {
      node.warn(`dashboard client message ignored: ${err instanceof Error ? err.message : 'unexpected'}`);
    }
  };
  widgets.set(node.id, handler);
  // Dashboard 2 finds the widget's bundle itself: this package is named node-red-dashboard-2-*
  // and declares its widgets in package.json ("node-red-dashboard-2").
  group.register(node, def, events);
  node.on('close', (_removed, done) => {
    closed = true;
    if (widgets.get(node.id) === handler) widgets.delete(node.id);
    done();
  });
  return true;
}
