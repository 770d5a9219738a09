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

/** `param` list/update/add/remove with the access rules of the spec (list everywhere, changes not under view). */
export const paramRoute: Route = (ctx) => {
  const match = PARAM_PATH.exec(ctx.path);
  if (!match) return false;
  const level = match[1];
  const action = queryValue(ctx, 'action');
  if (action === 'list') {
    sendText(ctx.res, 200, listParams(ctx));
  } else if (action === 'update' || action === 'add' || action === 'remove') {
    if (level === 'view') sendText(ctx.res, 401, 'Unauthorized');
    else changeParams(ctx, action);
  } else {
    sendText(ctx.res, 400, `Error: unknown action ${action ?? '(none)'}`);
  }
  return true;
};

function listParams(ctx: SimContext): string {
  const groups = (queryValue(ctx, 'group') ?? '').split(',').map((g) => g.trim().replace(/^root\./, '')).filter((g) => g !== '');
  const selected = [...ctx.state.params].filter(([name]) => groups.length === 0 || groups.some((g) => matches(name, g)));
  // Spec: an invalid parameter value gives 200 with an empty body.
  return selected.map(([name, value]) => `root.${name}=${value}\r\n`).join('');
}

function matches(name: string, group: string): boolean {
  if (group.includes('*')) {
    const pattern = new RegExp('^' + group.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^]*') + '(\\.|$)');
    return pattern.test(name);
  }
  return name === group || name.startsWith(group + '.');
}

function changeParams(ctx: SimContext, action: 'update' | 'add' | 'remove'): void {
  const params = ctx.state.params;
  if (action === 'update') {
    const updates = ctx.query.filter(([k]) => k !== 'action').map(([k, v]) => [k.replace(/^root\./, ''), v] as const);
    const unknown = updates.find(([k]) => !params.has(k));
    if (updates.length === 0 || unknown) {
      sendText(ctx.res, 200, `# Error: Error setting '${unknown?.[0] ?? ''}'`);
      return;
    }
    for (const [k, v] of updates) params.set(k, v);
    sendText(ctx.res, 200, 'OK');
    return;
  }
  const group = queryValue(ctx, 'group') ?? '';
  if (action === 'add') {
    const template = queryValue(ctx, 'template') ?? '';
    const index = [...params.keys()].filter((k) => k.startsWith(`${group}.`)).map((k) => k.split('.')[1]).filter((v, i, all) => all.indexOf(v) === i).length;
    const node = `${group}.${template.charAt(0).toUpperCase()}${index}`;
    params.set(`${node}.Name`, '');
    sendText(ctx.res, 200, `${node.split('.')[1]} OK`);
    return;
  }
  const removed = [...params.keys()].filter((k) => k === group || k.startsWith(`${group}.`));
  for (const k of removed) params.delete(k);
  sendText(ctx.res, 200, removed.length > 0 ? 'OK' : `# Error: Error removing '${group}'`);
}
