/**
 * The settings of the Dashboard 2 widgets (ipcam-ui-camera, ipcam-ui-plates) as the parsers
 * that check them: the widget nodes parse their settings with these, and this package's build
 * gives the same limits to the editor (WIDGET_NODE_SETTINGS), so a dialog marks exactly what a
 * deploy would refuse.
 */
import { SNAPSHOT_SOURCES } from '../ops/snapshot';
import { FRAME_RATE_SETTING } from './frame-ticker';
import { int, oneOf, optional, text, withDefault } from '../input/params';

/** Most preset buttons a camera widget shows. */
export const WIDGET_PRESETS_MAX = 16;
/** Longest preset id or name of a button (the longer of the two interfaces' name limits). */
export const WIDGET_PRESET_MAX = 32;
/** Most rows the plates widget keeps and shows. */
export const WIDGET_ROWS_MAX = 200;

/**
 * A widget's size in its dashboard group and the label above it when its flow names none (a
 * hand-written or generated flow): a new widget's, which the dialog takes from the editor's
 * rules, and what the runtime gives Dashboard 2, which would lay such a widget out at 3 x 1.
 */
export const WIDGET_LAYOUT = {
  'ipcam-ui-camera': { width: 6, height: 5, label: '' },
  'ipcam-ui-plates': { width: 6, height: 5, label: 'Last plates' },
} as const;

/** A PTZ pad on the XML or the CGI interface, or none. */
export const WIDGET_PTZ = ['none', 'xml', 'cgi'] as const;

/** Preset ids or names, comma-separated: each one to WIDGET_PRESET_MAX characters, not blank. */
const PRESET_LIST = new RegExp(`^ *[^, ][^,]{0,${WIDGET_PRESET_MAX - 1}}(, *[^, ][^,]{0,${WIDGET_PRESET_MAX - 1}}){0,${WIDGET_PRESETS_MAX - 1}}$`);

export const UI_CAMERA_SETTINGS = {
  source: oneOf(SNAPSHOT_SOURCES),
  rate: FRAME_RATE_SETTING,
  ptz: oneOf(WIDGET_PTZ),
  presets: optional(
    text({
      max: WIDGET_PRESETS_MAX * (WIDGET_PRESET_MAX + 2),
      pattern: PRESET_LIST,
      patternText: `at most ${WIDGET_PRESETS_MAX} preset numbers or names, comma-separated, each at most ${WIDGET_PRESET_MAX} characters (e.g. 1,2,3)`,
    }),
  ),
};

export const UI_PLATES_SETTINGS = {
  count: withDefault(int({ min: 1, max: WIDGET_ROWS_MAX }), 10),
};

/**
 * The widget package's node types with their settings, for this package's editor rules: the
 * widgets' dialogs load those, and this package is built before the widgets'. Each widget folder's
 * spec.ts names the same settings; the widget build refuses a spec that differs from its row.
 */
export const WIDGET_NODE_SETTINGS = {
  'ipcam-ui-camera': UI_CAMERA_SETTINGS,
  'ipcam-ui-plates': UI_PLATES_SETTINGS,
} as const;

/** The same rows as the node specs both builds give `settingsLimits` (type and settings). */
export const WIDGET_SETTINGS_SPECS = Object.entries(WIDGET_NODE_SETTINGS).map(([type, settings]) => ({ type, settings }));

export interface CameraSettings {
  source: (typeof SNAPSHOT_SOURCES)[number];
  rate: number;
  api: (typeof WIDGET_PTZ)[number];
  /** The preset buttons, in order, each once. */
  presets: string[];
}

/**
 * A camera widget's settings, checked: EINPUT naming the first bad one. Left out, source and PTZ
 * are the dialog's defaults (a flow written by hand may not name them).
 */
export function checkCameraSettings(def: { source?: unknown; rate?: unknown; ptz?: unknown; presets?: unknown }): CameraSettings {
  const presets = UI_CAMERA_SETTINGS.presets.parse(def.presets, 'Presets');
  return {
    source: UI_CAMERA_SETTINGS.source.parse(def.source ?? 'jpg', 'Source'),
    rate: UI_CAMERA_SETTINGS.rate.parse(def.rate, 'Rate (frames per second)'),
    api: UI_CAMERA_SETTINGS.ptz.parse(def.ptz ?? 'none', 'PTZ'),
    presets: presets === undefined ? [] : [...new Set(presets.split(',').map((p) => p.trim()))],
  };
}

/** A plates widget's Rows setting, checked (blank: 10). */
export function checkRows(value: unknown): number {
  return UI_PLATES_SETTINGS.count.parse(value, 'Rows');
}
