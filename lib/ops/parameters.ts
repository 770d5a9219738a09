/**
 * Spec 4.2: device parameters (`param` list, update, add, remove). These entries are also the
 * library functions of lib/ops/param-calls.ts, which run them: one set of checks and builders.
 */
import { missingGroupOf, parseKeyValues } from '../cgi/codec';
import { list, oneOf, optional, record, shape, text, withDefault, withLabels, type Param } from '../input/params';
import { defineOp, type AccessLevel, type Operation } from './types';

/** A parameter or group name as the device writes it: `Image.I0.Appearance.Resolution`, `Motion.M1`. */
export const PARAM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** What `list` takes: a name, or a pattern with the wildcard `*` (`Image.I*.Appearance`). */
export const PARAM_PATTERN = /^[A-Za-z0-9_*][A-Za-z0-9_.*-]*$/;
/** Longest parameter or group name (no device names one this long). */
export const PARAM_NAME_MAX = 128;
/**
 * Longest parameter value sent. The spec gives none; the answers are read line by line
 * (`Group.Name=value`), so a value holds no line break or other control character (a tab may).
 */
export const PARAM_VALUE_MAX = 1024;
/** Most names in one request. */
export const PARAM_NAMES_MAX = 64;
/** Spec 4.2: `list` under every access level; add, remove and update under operator and admin. */
export const LIST_LEVELS = ['view', 'operator', 'admin'] as const;
export const CHANGE_LEVELS = ['operator', 'admin'] as const;
/** Largest parameter list answer read (a full list of a real camera is some 100 KB). */
export const PARAM_LIST_MAX_BYTES = 4 * 1024 * 1024;

/** Names of what is changed: no wildcard (an update, or a removal, never acts on a pattern). */
const paramName = text({ max: PARAM_NAME_MAX, pattern: PARAM_NAME, patternText: 'a parameter name like Image.I0.Appearance.Resolution (no wildcard)' });
const groupPattern = text({ max: PARAM_NAME_MAX, pattern: PARAM_PATTERN, patternText: 'a group name like Image.I0 (wildcard * allowed)' });

const nameList = list(groupPattern, { maxCount: PARAM_NAMES_MAX });
/** Group names as a list, one name, or names apart by commas (the spec's own form): always a list. */
const groupNames: Param<string[]> = {
  limits: nameList.limits,
  parse(value, field) {
    const items = typeof value === 'string' && value.length <= PARAM_NAMES_MAX * (PARAM_NAME_MAX + 1) && value.includes(',') ? value.split(',').map((g) => g.trim()) : value;
    return nameList.parse(items, field);
  },
};

const valueText = text({ max: PARAM_VALUE_MAX, min: 0, kind: 'value' });
/** A value: text by the value rule, a finite number, or a boolean, each sent as its text. */
const paramValue: Param<string> = {
  limits: valueText.limits,
  parse: (value, field) => valueText.parse(typeof value === 'boolean' ? String(value) : value, field),
};

function paramPath(level: AccessLevel): string {
  return `/cgi-bin/${level}/param`;
}

export const listParams = defineOp({
  name: 'listParams',
  label: 'Read parameters',
  api: 'cgi',
  access: 'view',
  class: 'read',
  summary: 'Reads device parameters: the groups named (wildcard * allowed), or all',
  params: withLabels(shape({ group: optional(groupNames), level: withDefault(oneOf(LIST_LEVELS), 'admin') }), { group: 'Groups', level: 'Access level' }),
  request(p) {
    const groups = p.group ?? [];
    // Field notes: several groups go as repeated `group=` keys, which every firmware reads.
    return { path: paramPath(p.level), query: [['action', 'list'], ...groups.map((g) => ['group', g] as const)], maxBytes: PARAM_LIST_MAX_BYTES, what: 'parameter list', names: groups, groups: true };
  },
  parse: (answer) => parseParamList(answer.text),
});

/**
 * A parameter list answer: `Group.Name=value` lines (keys without `root.`, which a group after
 * an error line may lack anyway) and, field notes, one `# Error: Error -1 getting param in group
 * 'X'` line per group the device lacks: their groups are `missing`, the values that came are kept.
 * An answer of only such lines is `{}`.
 */
export function parseParamList(text: string): { payload: Record<string, string>; missing?: string[] } {
  const missing: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('getting param')) continue;
    const group = missingGroupOf(line.trim());
    if (group !== undefined && missing.length < PARAM_NAMES_MAX && !missing.includes(group)) missing.push(group);
  }
  const payload = Object.fromEntries([...parseKeyValues(text)].filter(([key]) => !key.startsWith('#')));
  return missing.length > 0 ? { payload, missing } : { payload };
}

export interface ParamsUpdated {
  ok: true;
  updated: string[];
}

export const updateParams = defineOp({
  name: 'updateParams',
  label: 'Change parameters',
  api: 'cgi',
  access: 'operator',
  class: 'change',
  summary: 'Assigns values to device parameters',
  params: withLabels(shape({ params: record(paramName, paramValue, { maxCount: PARAM_NAMES_MAX }), level: withDefault(oneOf(CHANGE_LEVELS), 'admin') }), { params: 'Values', level: 'Access level' }),
  request(p) {
    const names = Object.keys(p.params);
    return { path: paramPath(p.level), query: [['action', 'update'], ...names.map((n) => [n, p.params[n] as string] as const)], what: 'parameter update', names };
  },
  parse: (_answer, p): { payload: ParamsUpdated } => ({ payload: { ok: true, updated: Object.keys(p.params) } }),
});

export interface ParamGroupAdded {
  ok: true;
  /** The group the device created (e.g. `Motion.M2`), when its answer names it. */
  group?: string;
}

/** `M2 OK` (the new node under the group, as VAPIX-style firmware answers) or `OK`. */
const ADDED = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s+OK\s*$/;

/** The group created, from the first line of an add answer; undefined when the device does not say. */
export function createdGroup(answerText: string, group: string): string | undefined {
  const line = answerText.slice(0, PARAM_NAME_MAX + 16).trimStart().split(/\r?\n/, 1)[0] ?? '';
  const node = ADDED.exec(line)?.[1];
  if (node === undefined || node.length > PARAM_NAME_MAX) return undefined;
  return node.startsWith(`${group}.`) ? node : `${group}.${node}`;
}

export const addParamGroup = defineOp({
  name: 'addParamGroup',
  label: 'Add a parameter group',
  api: 'cgi',
  access: 'operator',
  class: 'change',
  summary: 'Adds a parameter group node from a template the device supports (e.g. Motion from motion)',
  params: withLabels(shape({ group: paramName, template: paramName, level: withDefault(oneOf(CHANGE_LEVELS), 'admin') }), { group: 'Group', template: 'Template', level: 'Access level' }),
  request: (p) => ({ path: paramPath(p.level), query: [['action', 'add'], ['group', p.group], ['template', p.template]], what: 'parameter group add', names: [p.group, p.template] }),
  parse(answer, p): { payload: ParamGroupAdded } {
    const group = createdGroup(answer.text, p.group);
    return { payload: group === undefined ? { ok: true } : { ok: true, group } };
  },
});

export const removeParamGroup = defineOp({
  name: 'removeParamGroup',
  label: 'Remove a parameter group',
  api: 'cgi',
  access: 'operator',
  class: 'destructive',
  summary: 'Removes a parameter group node and every parameter under it',
  params: withLabels(shape({ group: paramName, level: withDefault(oneOf(CHANGE_LEVELS), 'admin') }), { group: 'Group', level: 'Access level' }),
  request: (p) => ({ path: paramPath(p.level), query: [['action', 'remove'], ['group', p.group]], what: 'parameter group removal', names: [p.group] }),
  parse: () => ({ payload: { ok: true as const } }),
});

export const PARAMETERS_OPERATIONS: readonly Operation[] = [listParams, updateParams, addParamGroup, removeParamGroup];
