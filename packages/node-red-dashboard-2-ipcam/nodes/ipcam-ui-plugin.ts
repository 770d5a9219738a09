/**
 * This package's Dashboard 2 plugin: takes the messages of the ipcam widgets' components (their
 * `widget-action`s) with the connection they came on, on every client connection, whenever the
 * widget was deployed. Without Dashboard 2 nothing calls it.
 */
import { routeAction, type DashboardConnection } from './ui-dashboard';

interface PluginAPI {
  plugins: {
    registerPlugin(id: string, definition: { type: string; hooks: { onAction(conn: DashboardConnection, id: unknown, msg: unknown): unknown } }): void;
  };
}

export = function register(RED: PluginAPI): void {
  RED.plugins.registerPlugin('ipcam-dashboard-link', {
    type: 'node-red-dashboard-2',
    hooks: { onAction: (conn, id, msg) => routeAction(conn, id, msg) },
  });
};
