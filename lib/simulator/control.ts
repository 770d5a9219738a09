import type { Simulator } from './index';
import type { Route, SimContext } from './context';
import type { AnswerStyle, Fault } from './state';
import { eventsControl } from './events';
import { platePagingControl } from './plate-routes';
import type { StreamFault, StreamStyle } from './io';
import { sendText } from './respond';

const CONTROL_PREFIX = '/_sim/';
const ANSWER_KEYS = ['http10', 'halfOpen', 'latin1', 'spacedParams', 'refuseRelay', 'refusePtz', 'refuseCheck', 'refuseStream'] as const;
const FAULT_KINDS = new Set<Fault['kind']>(['stall', 'drop', 'status', 'garbage', 'slow', 'answer']);

/**
 * The control API (no authentication: it drives the simulator, it is not part of the device):
 * `GET /_sim/state` (also the WS-Discovery port: `discovery: { port, multicast }`), `GET /_sim/requests`, `POST /_sim/faults` (a Fault as JSON),
 * `DELETE /_sim/faults`, `DELETE /_sim/requests`, `GET /_sim/plates`, `DELETE /_sim/plates`,
 * `POST /_sim/plates` (paging of GetLicensePlates: `{ ignoreOffset, sendTotal, bogusTotal }`),
 * `POST /_sim/events` (post device events, see `PostEventOptions`: plates by `group`, empty
 * keep-alives `{ kind: 'keepalive', empty: true }`, tracking bursts `{ kind: 'tracking', count }`,
 * a raw `currentTime` such as the 20-digit one of a recorder bug), `GET /_sim/io`,
 * `POST /_sim/io` ({ input, active } | { output, active } | { detection, group, level, threshold? } |
 * { streamFault } | { streamStyle }), `POST /_sim/answer` ({ http10?, halfOpen?, latin1?, spacedParams?, refuseRelay?, refusePtz?, refuseCheck?,
 * refuseStream? } booleans: `latin1` answers parameter lists in ISO-8859-1, `spacedParams` writes
 * their lines ` root.Group.Name = value `, each `refuse*` makes
 * the device refuse that kind of command as real firmware does, HTTP 200 with a `# Error:` line), `GET /_sim/ptz`.
 */
export function controlRoute(ctx: SimContext, sim: Simulator): ReturnType<Route> {
  if (!ctx.path.startsWith(CONTROL_PREFIX)) return false;
  const what = `${ctx.method} ${ctx.path.slice(CONTROL_PREFIX.length)}`;
  switch (what) {
    case 'GET state':
      return sendJson(ctx, 200, {
        device: ctx.state.device,
        params: Object.fromEntries(ctx.state.params),
        requestCount: ctx.state.requestCount,
        faults: ctx.state.faults,
        plateCount: ctx.state.plates.size,
        platePaging: ctx.state.plates.paging,
        vehicle: ctx.state.vehicle,
        httpPost: ctx.state.httpPost,
        answer: ctx.state.answer,
        discovery: { port: sim.discoveryPort, multicast: sim.discoveryMulticast, answered: sim.discoveryAnswered },
      });
    case 'GET plates':
      return sendJson(ctx, 200, ctx.state.plates.all());
    case 'POST plates':
      return platePagingControl(ctx);
    case 'DELETE plates':
      ctx.state.plates.clear();
      return sendJson(ctx, 200, { ok: true });
    case 'GET requests':
      return sendJson(ctx, 200, ctx.state.requests);
    case 'DELETE requests':
      sim.resetRequests();
      return sendJson(ctx, 200, { ok: true });
    case 'POST faults': {
      const fault = parseFault(ctx.body);
      if (typeof fault === 'string') return sendJson(ctx, 400, { error: fault });
      sim.inject(fault);
      return sendJson(ctx, 200, { ok: true });
    }
    case 'POST events':
      return eventsControl(ctx, sim);
    case 'DELETE faults':
      sim.clearFaults();
      return sendJson(ctx, 200, { ok: true });
    case 'GET io':
      return sendJson(ctx, 200, ioSnapshot(ctx));
    case 'POST io':
      return ioControl(ctx);
    case 'POST answer':
      return answerControl(ctx, sim);
    case 'GET ptz':
      return sendJson(ctx, 200, { state: Object.fromEntries(ctx.state.ptz.state), presets: Object.fromEntries(ctx.state.ptz.presets), tours: [...ctx.state.ptz.tours], home: ctx.state.ptz.home, log: ctx.state.ptz.log });
    default:
      return sendJson(ctx, 404, { error: `unknown control call ${what}` });
  }
}

function sendJson(ctx: SimContext, status: number, value: unknown): true {
  sendText(ctx.res, status, JSON.stringify(value, null, 2), 'application/json');
  return true;
}

function parseFault(body: Buffer): Fault | string {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return 'body is not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'a fault is an object';
  const f = value as Record<string, unknown>;
  if (!FAULT_KINDS.has(f['kind'] as Fault['kind'])) return `kind must be one of ${[...FAULT_KINDS].join(', ')}`;
  const fault: Fault = { kind: f['kind'] as Fault['kind'] };
  for (const key of ['status', 'delay', 'times'] as const) {
    if (f[key] === undefined) continue;
    if (typeof f[key] !== 'number' || !Number.isInteger(f[key])) return `${key} must be a whole number`;
    fault[key] = f[key];
  }
  for (const key of ['path', 'contentType', 'body'] as const) {
    if (f[key] === undefined) continue;
    if (typeof f[key] !== 'string') return `${key} must be text`;
    fault[key] = f[key];
  }
  return fault;
}

function ioSnapshot(ctx: SimContext): object {
  const io = ctx.state.io;
  return {
    inputs: Object.fromEntries(io.inputs),
    outputs: Object.fromEntries(io.outputs),
    motion: Object.fromEntries(io.levels.motion),
    audio: Object.fromEntries(io.levels.audio),
    style: io.style,
    openStreams: io.openStreams,
    relayLog: io.relayLog,
  };
}

/** Drives inputs, relays, detection levels and stream faults, one change per call. */
function ioControl(ctx: SimContext): true {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(ctx.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return sendJson(ctx, 400, { error: 'body is not JSON' });
  }
  const io = ctx.state.io;
  try {
    if (typeof body['input'] === 'number') io.setInput(body['input'], body['active'] === true);
    else if (typeof body['output'] === 'number') io.setOutput(body['output'], body['active'] === true);
    else if (body['detection'] === 'motion' || body['detection'] === 'audio') {
      io.setLevel(body['detection'], Number(body['group']), Number(body['level']), body['threshold'] === undefined ? undefined : Number(body['threshold']));
    } else if (['drop', 'stall', 'garbage', 'oversize'].includes(String(body['streamFault']))) io.streamFault(body['streamFault'] as StreamFault);
    else if (typeof body['streamStyle'] === 'object' && body['streamStyle'] !== null) io.style = { ...io.style, ...(body['streamStyle'] as Partial<StreamStyle>) };
    else return sendJson(ctx, 400, { error: 'give input, output, detection, streamFault or streamStyle' });
  } catch (err) {
    return sendJson(ctx, 400, { error: err instanceof Error ? err.message : String(err) });
  }
  return sendJson(ctx, 200, ioSnapshot(ctx));
}

/** `{ http10?, halfOpen?, latin1?, refuse*? }`: how the device answers from now on. */
function answerControl(ctx: SimContext, sim: Simulator): true {
  let body: unknown;
  try {
    body = JSON.parse(ctx.body.toString('utf8'));
  } catch {
    return sendJson(ctx, 400, { error: 'body is not JSON' });
  }
  if (typeof body !== 'object' || body === null) return sendJson(ctx, 400, { error: `give { ${ANSWER_KEYS.join('?, ')}? }` });
  const style: Partial<AnswerStyle> = {};
  for (const key of ANSWER_KEYS) {
    const value = (body as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') return sendJson(ctx, 400, { error: `${key} must be true or false` });
    style[key] = value;
  }
  sim.setAnswer(style);
  return sendJson(ctx, 200, ctx.state.answer);
}
