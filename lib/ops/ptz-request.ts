import { inputError } from '../errors/errors';

/** The actions that take a preset, and those that take a tour, on both interfaces. */
const PRESET_ACTIONS = ['gotoPreset', 'savePreset', 'removePreset'];
const TOUR_ACTIONS = ['startTour', 'stopTour'];

function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/**
 * The PTZ command a message asks for, on both interfaces: `{ preset }` without an action means
 * "go to that preset", `{ tour }` without an action "start that tour". A node whose own Action
 * setting already takes that field (e.g. savePreset, stopTour) keeps it: the message then only
 * names the preset or tour. Preset and tour together without an action are EINPUT.
 */
export function withImpliedAction(fields: Record<string, unknown>, setting: unknown): Record<string, unknown> {
  if (given(fields['action'])) return fields;
  const preset = given(fields['preset']);
  const tour = given(fields['tour']);
  if (!preset && !tour) return fields;
  if (preset && tour) throw inputError('Give an action with both preset and tour: alone, preset means gotoPreset and tour means startTour');
  const own = typeof setting === 'string' ? setting.trim() : '';
  if ((preset && PRESET_ACTIONS.includes(own)) || (tour && TOUR_ACTIONS.includes(own))) return fields;
  return { ...fields, action: preset ? 'gotoPreset' : 'startTour' };
}
