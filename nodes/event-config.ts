import type { EventServer } from '../lib/events/server';
import type { Node } from './red';

/** What nodes fed by device posts get from their `server` setting. */
export interface EventServerConfigNode extends Node {
  /** The listener, or undefined when its settings are invalid (the reason is in `problem`). */
  server: EventServer | undefined;
  problem: string | undefined;
}
