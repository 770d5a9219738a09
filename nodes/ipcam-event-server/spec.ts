import { EVENT_SERVER_SETTINGS } from '../../lib/events/server';
import type { NodeSpec } from '../../lib/node-spec';

export const spec: NodeSpec = { type: 'ipcam-event-server', settings: EVENT_SERVER_SETTINGS };
