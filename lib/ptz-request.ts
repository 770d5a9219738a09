import { inputError } from './errors';

function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/**
 * The PTZ command a message asks for, on both interfaces: `{ preset }` without an action means
 * "go to that preset", `{ tour }` without an action "start that tour". Both without an action is
 * EINPUT (which one was meant cannot be told). Any other message is left as it is.
 */
export function withImpliedAction(fields: Record<string, unknown>): Record<string, unknown> {
  if (given(fields['action'])) return fields;
  const preset = given(fields['preset']);
  const tour = given(fields['tour']);
  if (preset && tour) throw inputError('Give an action with both preset and tour: alone, preset means gotoPreset and tour means startTour');
  if (preset) return { ...fields, action: 'gotoPreset' };
  if (tour) return { ...fields, action: 'startTour' };
  return fields;
}
