import { EventServer } from '../../lib/events/server';
import { IpcamError } from '../../lib/errors/errors';
import type { EventServerConfigNode } from '../event-config';
import type { NodeAPI, NodeDef } from '../red';

interface EventServerDef extends NodeDef {
  port?: string | number;
  bind?: string;
  path?: string;
  maxBody?: string | number;
  maxConnections?: string | number;
  allow?: string;
}

function numberOrUndefined(value: string | number | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : Number(value);
}

/**
 * The editor used to store its default, 16 MiB, in every node; that value now means the default
 * (4 MiB, sized to the largest real posts), as for a node left blank.
 */
const FORMER_DEFAULT_MAX_BODY = 16 * 1024 * 1024;

function maxBodyOf(value: string | number | undefined): number | undefined {
  const size = numberOrUndefined(value);
  return size === FORMER_DEFAULT_MAX_BODY ? undefined : size;
}

export = function register(RED: NodeAPI): void {
  function IpcamEventServerNode(this: EventServerConfigNode, def: EventServerDef): void {
    RED.nodes.createNode(this, def);
    const credentials = (this.credentials ?? {}) as { username?: string; password?: string };
    this.problem = undefined;
    try {
      this.server = new EventServer({
        port: numberOrUndefined(def.port),
        bind: def.bind,
        path: def.path,
        maxBody: maxBodyOf(def.maxBody),
        maxConnections: numberOrUndefined(def.maxConnections),
        allow: def.allow,
        username: credentials.username || undefined,
        password: credentials.password,
        // One line per server for refused posts and dropped connections, at a bounded rate.
        onWarning: (text) => this.warn(text),
      });
    } catch (err) {
      this.server = undefined;
      this.problem = err instanceof IpcamError ? err.message : String(err);
      this.error(`Event server settings: ${this.problem}`);
    }
    const server = this.server;
    // A port in use is reported (status of the nodes using it, and the log), never thrown.
    server?.start().catch((err: unknown) => this.error(err instanceof Error ? err.message : String(err)));
    this.on('close', (_removed, done) => {
      void (server ? server.close() : Promise.resolve()).finally(done);
    });
  }
  RED.nodes.registerType('ipcam-event-server', IpcamEventServerNode as (this: never, def: never) => void, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });
};
