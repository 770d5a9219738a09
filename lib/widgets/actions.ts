/**
 * What a browser may ask of a dashboard widget: the closed list of actions of DESIGN's "Dashboard
 * widgets: what a browser may ask", each read strictly. A dashboard has no login, so every message
 * from a browser is a stranger's: it is one of these exact shapes (a plain object, exactly these
 * keys, these types and sizes) or it is refused with a reason, and nothing of it is used. No action
 * names a device, carries a picture or a plate row, or changes what other viewers see.
 *
 * On the wire (Dashboard 2's `widget-action`, the message a component emits):
 * - both widgets: `{ action: 'watch' }`, `{ action: 'unwatch' }` (the page shows or stops showing
 *   the widget: what the server sends goes only to watching clients);
 * - camera: `{ action: 'press', move: <PTZ action of the pad> }`, `{ action: 'release' }`,
 *   `{ action: 'preset', preset: <one of the widget's presets> }`, `{ action: 'save' }` (the
 *   current frame out of the node's output);
 * - plates: `{ action: 'select', row: <id of a row the server sent> }`.
 */
import { WIDGET_PRESET_MAX, type WIDGET_PTZ } from './settings';

/** The PTZ pad's moves by their XML action, with the CGI move of each (zoom has none on CGI). */
export const PAD_MOVES: Readonly<Record<string, string | undefined>> = Object.freeze({
  Up: 'up',
  Down: 'down',
  Left: 'left',
  Right: 'right',
  LeftUp: 'upleft',
  RightUp: 'upright',
  LeftDown: 'downleft',
  RightDown: 'downright',
  ZoomIn: undefined,
  ZoomOut: undefined,
});

export type CameraAction =
  | { action: 'watch' }
  | { action: 'unwatch' }
  | { action: 'press'; move: string }
  | { action: 'release' }
  | { action: 'preset'; preset: string }
  | { action: 'save' };

export type PlatesAction = { action: 'watch' } | { action: 'unwatch' } | { action: 'select'; row: number };

/** A browser's message that is none of the actions: why, in our words (never its own text). */
export interface Refused {
  refused: string;
}

/** What a camera widget's settings allow a browser to ask. */
export interface CameraAllows {
  ptz: (typeof WIDGET_PTZ)[number];
  presets: readonly string[];
}

/** Longest action name read: anything longer is no action of ours. */
const ACTION_MAX = 16;
/** Largest row id the server hands out (ids count up from 1 and wrap before this). */
export const ROW_ID_MAX = Number.MAX_SAFE_INTEGER;

/** Why a message of the right action is refused when its fields are not exactly the action's. */
const NOT_EXACT: Refused = Object.freeze({ refused: 'not an action object with exactly its fields' });

/**
 * The message's fields when it is a plain object with exactly `action` and `keys`, own and
 * enumerable (no symbol, no inherited or extra key, none missing); undefined for anything else.
 */
function exactly(msg: unknown, keys: readonly string[]): Record<string, unknown> | undefined {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return undefined;
  const proto: unknown = Object.getPrototypeOf(msg);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const own = Object.keys(msg);
  if (own.length !== keys.length + 1 || Object.getOwnPropertySymbols(msg).length > 0) return undefined;
  for (const key of own) if (key !== 'action' && !keys.includes(key)) return undefined;
  return msg as Record<string, unknown>;
}

/** The `action` of a message, when it is a short string (else undefined). */
function actionOf(msg: unknown): string | undefined {
  if (typeof msg !== 'object' || msg === null || !Object.hasOwn(msg, 'action')) return undefined;
  const action = (msg as Record<string, unknown>)['action'];
  return typeof action === 'string' && action.length <= ACTION_MAX ? action : undefined;
}

/** A camera widget's action, checked against its settings; a refusal for anything else. */
export function cameraAction(msg: unknown, allows: CameraAllows): CameraAction | Refused {
  const action = actionOf(msg);
  switch (action) {
    case 'watch':
    case 'unwatch':
    case 'release':
    case 'save': {
      return exactly(msg, []) ? { action } : NOT_EXACT;
    }
    case 'press': {
      const fields = exactly(msg, ['move']);
      if (!fields) return NOT_EXACT;
      if (allows.ptz === 'none') return { refused: 'this widget has no PTZ pad' };
      const move = fields['move'];
      if (typeof move !== 'string' || move.length > ACTION_MAX || !Object.hasOwn(PAD_MOVES, move)) return { refused: 'not a move of the PTZ pad' };
      if (allows.ptz === 'cgi' && PAD_MOVES[move] === undefined) return { refused: 'not a move of the CGI PTZ pad' };
      return { action, move };
    }
    case 'preset': {
      const fields = exactly(msg, ['preset']);
      if (!fields) return NOT_EXACT;
      if (allows.ptz === 'none') return { refused: 'this widget has no PTZ pad' };
      const preset = fields['preset'];
      const own = typeof preset === 'string' && preset.length <= WIDGET_PRESET_MAX ? allows.presets.find((p) => p === preset) : undefined;
      return own === undefined ? { refused: 'not one of the widget\'s presets' } : { action, preset: own };
    }
    default:
      return { refused: 'not an action of the camera widget' };
  }
}

/** A plates widget's action; a refusal for anything else. Whether the row is on show is the widget's to say. */
export function platesAction(msg: unknown): PlatesAction | Refused {
  const action = actionOf(msg);
  switch (action) {
    case 'watch':
    case 'unwatch': {
      return exactly(msg, []) ? { action } : NOT_EXACT;
    }
    case 'select': {
      const fields = exactly(msg, ['row']);
      if (!fields) return NOT_EXACT;
      const row = fields['row'];
      if (typeof row !== 'number' || !Number.isSafeInteger(row) || row < 1 || row > ROW_ID_MAX) return { refused: 'not a row id' };
      return { action, row };
    }
    default:
      return { refused: 'not an action of the plates widget' };
  }
}

export function refused<T extends object>(result: T | Refused): result is Refused {
  return Object.hasOwn(result, 'refused');
}
