import { defineAction } from '../../lib/node-spec';
import { IpcamError } from '../../lib/errors/errors';
import { int, isBlank, optional } from '../../lib/input/params';
import { exactWord, NONE_HINT, OVERRIDES, payloadFields } from '../../lib/input/payload';
import { PTZ_API_SETTING, PTZ_APIS, PTZ_PAYLOAD_ACTIONS, refusedSetting } from '../../lib/settings';
import { echo } from '../../lib/errors/echo';
import { nearest } from '../../lib/input/suggest';
import { PtzMovers } from '../../lib/ops/ptz-movers';
import { withImpliedAction } from '../../lib/ops/ptz-request';
import { DEFAULT_SPEED_RANGE } from '../../lib/ops/ptz-xml';
import { DURATION_SETTING } from '../../lib/ops/ptz-timed-moves';
import { CHANNEL_SETTING } from '../../lib/xml/channel';
import { ptzDone, ptzList, ACTION_WORDS } from '../../lib/status/status';

export const spec = defineAction({
  type: 'ipcam-ptz',
  settings: { api: PTZ_API_SETTING, speed: optional(int(DEFAULT_SPEED_RANGE)), duration: DURATION_SETTING, channel: CHANNEL_SETTING, overrides: OVERRIDES },
  // continuous, home and stream belong to the CGI interface, move to its action 'move'; the
  // interface itself refuses them where they do not apply.
  payloadKeys: ['action', 'speed', 'duration', 'channel', 'preset', 'tour', 'continuous', 'home', 'stream', 'move'],
  status: ['ptzDone', ...ACTION_WORDS],
  deploy(settings, stored) {
    const api = settings.api ?? 'xml';
    // The Action setting's rule is its interface's: read here, once the interface is known.
    const given = stored['action'];
    if (isBlank(given)) return { ...settings, api, action: undefined };
    const rule = PTZ_APIS[api].action;
    try {
      return { ...settings, api, action: rule.parse(given, 'Action') };
    } catch (err) {
      if (!(err instanceof IpcamError)) throw err;
      const actions = rule.limits.type === 'oneOf' ? rule.limits.values : [];
      throw refusedSetting('action', given, `Unknown PTZ action ${echo(given)} in the Action setting`, typeof given === 'string' ? nearest(given.trim(), actions) : undefined);
    }
  },
  // What the node keeps: its movers, which owe the Stops of the cameras it set moving.
  keep: {
    open: (plan, warn) => new PtzMovers(plan.api, (err) => warn(`PTZ stop failed: ${err instanceof IpcamError ? err.message : 'unexpected error'}`)),
    close: (movers) => movers.close(),
  },
  input(payload, plan) {
    const object = payloadFields(payload);
    const fields = object ?? (typeof payload === 'string' && payload.trim() !== '' ? { action: payload } : {});
    // A message's action is spelt exactly as the interface names it: 'left' for Left is offered,
    // never moved. A text payload that is no action at all may not be meant for this node.
    if (fields['action'] !== undefined && fields['action'] !== '') fields['action'] = exactWord('PTZ action', fields['action'], PTZ_PAYLOAD_ACTIONS[plan.api], object ? '' : NONE_HINT);
    // `{ preset }` alone goes to that preset, `{ tour }` alone starts that tour, whatever the Action setting.
    return { action: plan.action, speed: plan.speed, duration: plan.duration, channel: plan.channel, ...withImpliedAction(fields, plan.action) };
  },
  run: (client, request, { signal, borrowed, hold, kept }) => kept.move(client, request, signal, { borrowed, hold }),
  output: (done) => (done.list ? { payload: done.list, status: ptzList(done.list.length, done.kind ?? 'presets') } : { payload: { action: done.action, ok: true }, status: ptzDone(done.action) }),
});
