/**
 * What the two dashboard widgets share: registering with a Dashboard 2 group (the API of
 * @flowfuse/node-red-dashboard 1.31, an optional peer), the event they answer their components on,
 * the clients that show a widget now, and the line between the flow and the browser.
 *
 * A browser is a stranger (DESIGN, "Dashboard widgets: what a browser may ask"). Only wired
 * messages are flow input: they are taken by the widget's own input listener, never through
 * Dashboard's `beforeSend`, which Dashboard also calls for a client's `widget-send`,
 * `widget-change` and `widget-action`. A client's `widget-action` is taken by this package's
 * dashboard plugin (ipcam-ui-plugin.ts, Dashboard's `onAction` hook) with the connection it came
 * on, read as one of the widget's closed list of actions (lib/widgets/actions) and never passed on;
 * its `widget-send` and `widget-change` are refused there too (hooks `onSend`, `onChange`), and,
 * should a Dashboard release not call those hooks, by the widget's own `onChange` handler and by
 * `beforeSend`, which throws for anything but a wired message. Each refusal is counted, with at
 * most one warning per client a minute (lib/widgets/client-refusals). Dashboard's `evts.onSocket` is not
 * used: it binds only connections opened after the widget registered, and a client that
 * reconnects during a redeploy would be left unheard.
 *
 * The server answers on `msg-input:<widget id>`, the event Dashboard documents for what a widget
 * receives, emitted only on the connections of the clients that watch the widget, with only what
 * the widget shows. (Dashboard itself emits `msg-input:<id>` to every client for each wired
 * message: what it sends is `beforeSend`'s answer, an empty object, which a component ignores.)
 */
import { RefusalLog } from 'node-red-contrib-ipcam/dist/lib/widgets/client-refusals';
import { noDashboard } from 'node-red-contrib-ipcam/dist/lib/status/status';
import { WIDGET_LAYOUT } from 'node-red-contrib-ipcam/dist/lib/widgets/settings';
import type { Node, NodeAPI, NodeDef, NodeMessage, SendFn } from 'node-red-contrib-ipcam/dist/nodes/red';

/** Where the server answers one widget: `msg-input:<widget id>`, Dashboard's documented event. */
export const serverEvent = (id: string): string => `msg-input:${id}`;

interface WidgetRoute {
  /** A client's `widget-action` for this widget. */
  action(conn: DashboardConnection, msg: unknown): void;
  /** A client's message of a kind no widget of this package takes (`widget-send`, `widget-change`). */
  refuse(conn: DashboardConnection, reason: string): void;
}
/** The deployed widgets of this package, by node id: where the plugin routes their clients' messages. */
const widgets = new Map<string, WidgetRoute>();

/** Node types of this package: no browser message ever leaves one of them as a flow message. */
const OWN_TYPE = /^ipcam-/;

/**
 * Whether a client's message for the node `id` is this package's to take: a widget of this
 * package, or any node of this package (Dashboard 2 sends a client's `widget-send` out of any node
 * whose id the client names, widget or not). `typeOf` looks the node's type up in the runtime.
 */
export function isOwn(id: unknown, typeOf: (id: string) => string | undefined): id is string {
  if (typeof id !== 'string') return false;
  if (widgets.has(id)) return true;
  const type = typeOf(id);
  return type !== undefined && OWN_TYPE.test(type);
}

/**
 * A `widget-action` of a client (Dashboard 2's plugin hook `onAction`): a message for one of this
 * package's nodes is handled here (read strictly by its widget) and goes no further (null); any
 * other passes unchanged.
 */
export function routeAction(conn: DashboardConnection, id: unknown, msg: unknown, typeOf: (id: string) => string | undefined): unknown {
  if (!isOwn(id, typeOf)) return msg;
  widgets.get(id)?.action(conn, msg);
  return null;
}

/**
 * A `widget-send` or `widget-change` of a client (hooks `onSend`, `onChange`): none of this
 * package's nodes takes one; it is refused (counted by its widget) and goes no further (null).
 */
export function refuseOther(conn: DashboardConnection, id: unknown, msg: unknown, kind: string, typeOf: (id: string) => string | undefined): unknown {
  if (!isOwn(id, typeOf)) return msg;
  widgets.get(id)?.refuse(conn, `a ${kind} is not taken by this widget`);
  return null;
}

/** What a user installs for the widgets to work. */
const DASHBOARD_PACKAGE = '@flowfuse/node-red-dashboard';

/** A Socket.IO connection of a dashboard client, as far as a widget uses it. */
export interface DashboardConnection {
  id: string;
  handshake?: { address?: unknown };
  emit(event: string, ...args: unknown[]): boolean;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

/** The events a widget registers with Dashboard 2 (its "Widget Registration" guide). */
interface WidgetEvents {
  onAction: boolean;
  onChange: (msg: unknown, value: unknown, conn?: unknown) => void;
  beforeSend: (msg: NodeMessage) => Promise<NodeMessage> | NodeMessage;
  onInput: (msg: NodeMessage, send: SendFn) => void;
  onError: (err: unknown) => void;
}

interface UiGroup {
  register(node: Node, config: NodeDef, events: WidgetEvents): void;
}

export interface WidgetGlue {
  /**
   * One `widget-action` of a client of this widget (already matched to its id), as received:
   * read with lib/widgets/actions. Answers why it was refused, or undefined when it was taken.
   */
  onAction(conn: DashboardConnection, msg: unknown): string | undefined;
  /** A client that showed this widget is gone (tab closed, network lost) or unmounted it. */
  onGone(conn: DashboardConnection): void;
  /**
   * A wired message: handled here, never passed to the clients as it came (a plate event
   * holds the device's address). Throwing makes it an error of the node (Catch).
   */
  onInput(msg: NodeMessage): void;
}

/** How a connection is named in a warning: its id and the address it came from. */
export function clientWords(conn: DashboardConnection): string {
  const address = conn.handshake?.address;
  return typeof address === 'string' && address.length <= 64 ? `${conn.id} (${address})` : conn.id;
}

/** Wired messages whose ids a widget remembers (see registerWidget). */
const WIRED_IDS = 64;

/** What `beforeSend` throws for a message that did not come in on a wire. */
class NotFromFlow extends Error {
  constructor(readonly client: string | undefined) {
    super('a message from a dashboard client is not flow input');
  }
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
 * The settings Dashboard 2 lays the widget out by and hands its component: a size or label its
 * flow lacks (one written by hand or by a tool) is the widget's default, what its dialog opens
 * such a node with. Dashboard alone would lay it out 3 x 1, with no label.
 */
function withLayoutDefaults<D extends NodeDef>(def: D): D {
  const layout = (WIDGET_LAYOUT as Partial<Record<string, { width: number; height: number; label: string }>>)[def.type];
  if (!layout) return def;
  return { ...def, width: def['width'] ?? layout.width, height: def['height'] ?? layout.height, label: def['label'] ?? layout.label };
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
    node.status(noDashboard(Boolean(def.group)));
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
  const refusals = new RefusalLog((text) => node.warn(text));
  /** The wired messages, as they arrive: only these are flow input. */
  const wired = new WeakSet<object>();
  /**
   * And their ids, the last WIRED_IDS of them: a Dashboard plugin's onInput hook may hand
   * beforeSend a copy (with the same `_msgid`). A browser never learns a wired message's id:
   * no widget of this package sends one to a client.
   */
  const wiredIds = new Set<string>();
  const isWired = (msg: NodeMessage): boolean => wired.has(msg) || (typeof msg._msgid === 'string' && wiredIds.has(msg._msgid));
  // Registered before Dashboard's own input listener, so it marks the message before Dashboard's
  // beforeSend sees it (Node-RED calls a node's input listeners in order, with the same message).
  node.on('input', (msg, _send, done) => {
    wired.add(msg);
    if (typeof msg._msgid === 'string') {
      wiredIds.add(msg._msgid);
      if (wiredIds.size > WIRED_IDS) wiredIds.delete(wiredIds.values().next().value as string);
    }
    try {
      glue.onInput(msg);
    } catch (err) {
      // Reported here: Dashboard's listener completes the message too, and the last `done` wins.
      node.error(err, msg);
    }
    done();
  });
  const refuse = (client: string, who: string, reason: string): void => {
    if (!closed) refusals.refuse(client, who, reason);
  };
  const events: WidgetEvents = {
    // Dashboard's own handling of a client's widget-action (a message for the flow) is off: the
    // plugin hands this widget its actions.
    onAction: false,
    onChange: (_msg, _value, conn) => {
      const c = conn as DashboardConnection | undefined;
      refuse(typeof c?.id === 'string' ? c.id : 'unknown', c && typeof c.id === 'string' ? clientWords(c) : 'unknown', 'a widget-change is not taken by this widget');
    },
    // What Dashboard passes on to every client for a wired message: nothing (the widget's own
    // events carry what its watching clients need). Anything else is a browser's and goes nowhere.
    beforeSend: (msg) => {
      if (isWired(msg)) return {};
      const socket = (msg as { _client?: { socketId?: unknown } })._client?.socketId;
      throw new NotFromFlow(typeof socket === 'string' ? socket : undefined);
    },
    onInput: () => undefined,
    onError: (err) => {
      if (err instanceof NotFromFlow) refuse(err.client ?? 'unknown', err.client ?? 'unknown', 'a message for the flow is not taken by this widget');
      else node.warn(`dashboard: ${err instanceof Error ? err.message : 'unexpected failure'}`);
    },
  };
  const route: WidgetRoute = {
    action: (conn, msg) => {
      if (closed) return;
      let reason: string | undefined;
      try {
        reason = glue.onAction(conn, msg);
      } catch (err) {
        reason = `failed: ${err instanceof Error ? err.message : 'unexpected'}`;
      }
      if (reason !== undefined) refuse(conn.id, clientWords(conn), reason);
    },
    refuse: (conn, reason) => refuse(conn.id, clientWords(conn), reason),
  };
  widgets.set(node.id, route);
  // Dashboard 2 finds the widget's bundle itself: this package is named node-red-dashboard-2-*
  // and declares its widgets in package.json ("node-red-dashboard-2").
  group.register(node, withLayoutDefaults(def), events);
  node.on('close', (_removed, done) => {
    closed = true;
    if (widgets.get(node.id) === route) widgets.delete(node.id);
    done();
  });
  return true;
}
