/**
 * This package's Dashboard 2 plugin: takes the messages of the ipcam widgets' components (their
 * `widget-action`s) with the connection they came on, on every client connection, whenever the
 * widget was deployed; and stops a client's `widget-send` and `widget-change` for any node of
 * this package (a browser's message is never flow input). A hook that answers null ends the
 * message there (Dashboard 2's plugin guide). Without Dashboard 2 nothing calls it.
 */
import { refuseOther, routeAction, type DashboardConnection } from './ui-dashboard';

type Hook = (conn: DashboardConnection, id: unknown, msg: unknown) => unknown;

interface PluginAPI {
  nodes: { getNode(id: string): unknown };
  plugins: {
    registerPlugin(id: string, definition: { type: string; hooks: { onAction: Hook; onChange: Hook; onSend: Hook } }): void;
  };
}

export = function register(RED: PluginAPI): void {
  const typeOf = (id: string): string | undefined => {
    const node = RED.nodes.getNode(id) as { type?: unknown } | null;
    return typeof node?.type === 'string' ? node.type : undefined;
  };
  RED.plugins.registerPlugin('ipcam-dashboard-link', {
    type: 'node-red-dashboard-2',
    hooks: {
      onAction: (conn, id, msg) => routeAction(conn, id, msg, typeOf),
      onChange: (conn, id, msg) => refuseOther(conn, id, msg, 'widget-change', typeOf),
      // Called by Dashboard 2 (1.31) for a client's widget-send, though its plugin guide lists
      // only the other hooks; should a release drop it, the widget's beforeSend refuses the message.
      onSend: (conn, id, msg) => refuseOther(conn, id, msg, 'widget-send', typeOf),
    },
  });
};
