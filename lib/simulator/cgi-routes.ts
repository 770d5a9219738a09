import { CHANGE_LEVELS, PARAM_NAME, PARAM_NAME_MAX, PARAM_NAMES_MAX, PARAM_PATTERN, PARAM_VALUE_MAX } from '../ops/parameters';
import type { Route, SimContext } from './context';
import { queryValue } from './context';
import { SNAPSHOT_JPEG } from './images';
import { sendBuffer, sendText } from './respond';

export const snapshotRoute: Route = (ctx) => {
  if (ctx.path !== '/jpg/image.jpg' && ctx.path !== '/cgi-bin/admin/image') return false;
  sendBuffer(ctx.res, 200, SNAPSHOT_JPEG, 'image/jpeg');
  return true;
};

const PARAM_PATH = /^\/cgi-bin\/(view|operator|admin)\/param(\.cgi)?$/;

/** A template of `param?action=add`: the group it adds to, the node prefix, how many, default values. */
interface ParamTemplate {
  group: string;
  prefix: string;
  max: number;
  defaults: Readonly<Record<string, string>>;
}

/** The templates this simulated camera supports (as VAPIX-style firmware: `group=Motion&template=motion` adds `Motion.M<n>`). */
export const PARAM_TEMPLATES: Readonly<Record<string, ParamTemplate>> = {
  motion: {
    group: 'Motion',
    prefix: 'M',
    max: 10,
    defaults: { Name: '', Left: '0', Right: '9999', Top: '0', Bottom: '9999', WindowType: 'include', Sensitivity: '90', Threshold: '50', History: '90', ObjectSize: '15' },
  },
  event: {
    group: 'Event',
    prefix: 'E',
    max: 10,
    defaults: { Name: '', Enabled: 'no', Type: 'T', Priority: '1', HWInputs: 'xxxx', SWInput: '', Image: '1', Actions: '' },
  },
  recipient: {
    group: 'Recipient',
    prefix: 'R',
    max: 5,
    defaults: { Name: '', Type: 'http', Address: '', Port: '80', Path: '/' },
  },
};

/** `param` list/update/add/remove with the access rules of the spec (list everywhere, changes not under view). */
export const paramRoute: Route = (ctx) => {
  const match = PARAM_PATH.exec(ctx.path);
  if (!match) return false;
  const level = match[1] as string;
  const action = queryValue(ctx, 'action');
  if (action === 'list') {
    const text = listParams(ctx);
    // Field notes: some firmware answers its text in ISO-8859-1 and says so.
    if (ctx.state.answer.latin1) sendBuffer(ctx.res, 200, Buffer.from(text, 'latin1'), 'text/plain; charset=iso-8859-1');
    else sendText(ctx.res, 200, text);
  } else if (action === 'update' || action === 'add' || action === 'remove') {
    if (!(CHANGE_LEVELS as readonly string[]).includes(level)) sendText(ctx.res, 401, 'Unauthorized');
    else sendText(ctx.res, 200, action === 'update' ? updateParams(ctx) : action === 'add' ? addGroup(ctx) : removeGroup(ctx));
  } else {
    sendText(ctx.res, 400, `Error: unknown action ${action ?? '(none)'}`);
  }
  return true;
};

function withoutRoot(name: string): string {
  return name.startsWith('root.') ? name.slice(5) : name;
}

/** Groups as repeated `group=` keys (field notes) or apart by commas (the spec's form), or both. */
function listParams(ctx: SimContext): string {
  const groups = ctx.query.filter(([k]) => k === 'group').flatMap(([, v]) => v.split(',')).map((g) => withoutRoot(g.trim())).filter((g) => g !== '');
  // Spec: an invalid parameter value gives 200 with an empty body.
  if (groups.length > PARAM_NAMES_MAX || groups.some((g) => g.length > PARAM_NAME_MAX || !PARAM_PATTERN.test(g))) return '';
  const selected = [...ctx.state.params].filter(([name]) => groups.length === 0 || groups.some((g) => inGroup(name, g)));
  // Field notes: one error line per group the device lacks, first; the groups it has follow, and
  // after an error line they may come without `root.`.
  const lacking = groups.filter((g) => !selected.some(([name]) => inGroup(name, g)));
  const errors = lacking.map((g) => `# Error: Error -1 getting param in group '${g}'\r\n`).join('');
  const prefix = lacking.length > 0 ? '' : 'root.';
  // Field notes: some firmware puts spaces around the name, the `=` and the value.
  const line = ctx.state.answer.spacedParams ? (name: string, value: string): string => ` ${prefix}${name} = ${value} \r\n` : (name: string, value: string): string => `${prefix}${name}=${value}\r\n`;
  return errors + selected.map(([name, value]) => line(name, value)).join('');
}

/** `name` is `group`, lies under it, or matches it with `*` standing for any characters. */
function inGroup(name: string, group: string): boolean {
  if (!group.includes('*')) return name === group || name.startsWith(`${group}.`);
  for (let end = name.indexOf('.'); ; end = name.indexOf('.', end + 1)) {
    if (glob(group, end === -1 ? name : name.slice(0, end))) return true;
    if (end === -1) return false;
  }
}

/** Glob match with `*` only: one backtrack point, so at most pattern x text steps, never exponential. */
function glob(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** C0 controls and DEL but tab: what the line-based answers cannot carry. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_A_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function updateParams(ctx: SimContext): string {
  const params = ctx.state.params;
  const updates = ctx.query.filter(([k]) => k !== 'action').map(([k, v]) => [withoutRoot(k), v] as const);
  if (updates.length === 0 || updates.length > PARAM_NAMES_MAX) return "# Error: Error setting ''\r\n";
  const bad = updates.find(([k, v]) => k.length > PARAM_NAME_MAX || !PARAM_NAME.test(k) || !params.has(k) || [...v].length > PARAM_VALUE_MAX || NOT_A_VALUE.test(v));
  if (bad) return `# Error: Error setting '${bad[0].slice(0, PARAM_NAME_MAX)}'\r\n`;
  for (const [k, v] of updates) params.set(k, v);
  return 'OK\r\n';
}

/** Adds the lowest free `<Group>.<prefix><n>` of the template, with its default values. */
function addGroup(ctx: SimContext): string {
  const group = withoutRoot(queryValue(ctx, 'group') ?? '');
  const name = queryValue(ctx, 'template') ?? '';
  const template = Object.hasOwn(PARAM_TEMPLATES, name) ? PARAM_TEMPLATES[name] : undefined;
  if (!template) return `# Error: Error adding '${name.slice(0, PARAM_NAME_MAX)}'\r\n`;
  if (group !== template.group) return `# Error: Error adding '${group.slice(0, PARAM_NAME_MAX)}'\r\n`;
  let n = 0;
  while (n < template.max && nodeExists(ctx, `${group}.${template.prefix}${n}`)) n++;
  if (n >= template.max) return `# Error: Error adding '${group}'\r\n`;
  const node = `${template.prefix}${n}`;
  for (const [key, value] of Object.entries(template.defaults)) ctx.state.params.set(`${group}.${node}.${key}`, value);
  return `${node} OK\r\n`;
}

function nodeExists(ctx: SimContext, node: string): boolean {
  for (const key of ctx.state.params.keys()) if (key.startsWith(`${node}.`)) return true;
  return false;
}

/** Removes a node a template made (`Motion.M1`); fixed groups such as `Brand` cannot be removed. */
function removeGroup(ctx: SimContext): string {
  const group = withoutRoot(queryValue(ctx, 'group') ?? '');
  const dynamic = Object.values(PARAM_TEMPLATES).some((t) => group.startsWith(`${t.group}.${t.prefix}`) && /^\d+$/.test(group.slice(t.group.length + 1 + t.prefix.length)));
  if (!dynamic || !nodeExists(ctx, group)) return `# Error: Error removing '${group.slice(0, PARAM_NAME_MAX)}'\r\n`;
  for (const key of [...ctx.state.params.keys()]) if (key.startsWith(`${group}.`)) ctx.state.params.delete(key);
  return 'OK\r\n';
}
