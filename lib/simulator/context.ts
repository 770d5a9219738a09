import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorState } from './state';

/** One request as a route handler sees it. */
export interface SimContext {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Path without the query (the host of an absolute request line is dropped). */
  path: string;
  /** Decoded query pairs in order, repeated keys kept. */
  query: Array<[string, string]>;
  body: Buffer;
  state: SimulatorState;
}

/** Answers the request and returns true, or returns false when the path is not its own. */
export type Route = (ctx: SimContext) => boolean | Promise<boolean>;

export function queryValue(ctx: SimContext, key: string): string | undefined {
  return ctx.query.find(([k]) => k === key)?.[1];
}
