import { EVENT_SERVER_SETTINGS } from '../../lib/events/server';
import type { NodeSpec } from '../../lib/input/node-spec';

export const spec: NodeSpec = { type: 'ipcam-event-server', settings: EVENT_SERVER_SETTINGS };
