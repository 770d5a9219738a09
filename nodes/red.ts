/**
 * The parts of the Node-RED runtime API these nodes use, typed here rather than through
 * @types/node-red (written for Node-RED 1.x): a small surface that both 4.x and 5.x provide.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface NodeMessage {
  payload?: unknown;
  topic?: string;
  _msgid?: string;
  [key: string]: unknown;
}

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

export type SendFn = (msg: NodeMessage | Array<NodeMessage | NodeMessage[] | null>) => void;
export type DoneFn = (err?: Error) => void;

export interface NodeDef {
  id: string;
  type: string;
  name?: string;
  z?: string;
  [key: string]: unknown;
}

export interface Node<Credentials = Record<string, string>> {
  id: string;
  type: string;
  name?: string;
  /** The flow (tab or subflow instance) the node is in; absent for a global config node. */
  z?: string;
  credentials?: Partial<Credentials>;
  on(event: 'input', listener: (msg: NodeMessage, send: SendFn, done: DoneFn) => void): void;
  on(event: 'close', listener: (removed: boolean, done: () => void) => void): void;
  status(status: NodeStatus | Record<string, never>): void;
  error(err: unknown, msg?: NodeMessage): void;
  warn(text: unknown): void;
  log(text: unknown): void;
  send(msg: NodeMessage | Array<NodeMessage | NodeMessage[] | null>): void;
}

/** Express-style request and response of the admin HTTP API. */
export interface AdminRequest extends IncomingMessage {
  body?: unknown;
  params: Record<string, string>;
}
export interface AdminResponse extends ServerResponse {
  json(body: unknown): void;
  status(code: number): AdminResponse;
}
type AdminHandler = (req: AdminRequest, res: AdminResponse, next: () => void) => void;

export interface NodeAPI {
  nodes: {
    createNode(node: object, def: NodeDef): void;
    registerType(type: string, ctor: (this: never, def: never) => void, opts?: { credentials?: Record<string, { type: 'text' | 'password' }> }): void;
    getNode(id: string): unknown;
    /** Every node of the deployed flows, as stored (settings, not instances). */
    eachNode?(callback: (def: NodeDef) => void): void;
    getCredentials(id: string): Record<string, string> | undefined;
  };
  httpAdmin: {
    post(path: string, ...handlers: AdminHandler[]): void;
    get(path: string, ...handlers: AdminHandler[]): void;
  };
  util: {
    cloneMessage<T>(msg: T): T;
  };
  auth: {
    needsPermission(permission: string): AdminHandler;
  };
  /** The runtime settings (settings.js), read-only. */
  settings?: { readonly [key: string]: unknown };
}
