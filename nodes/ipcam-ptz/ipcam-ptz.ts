import { CgiPtzMover } from '../../lib/ops/ptz-cgi';
import { ptzDone, ptzList } from '../../lib/status/status';
import { echo } from '../../lib/errors/echo';
import { IpcamError, inputError } from '../../lib/errors/errors';
import { PtzMover } from '../../lib/ops/ptz-mover';
import { withImpliedAction } from '../../lib/ops/ptz-request';
import { DeviceClient } from '../../lib/transport/client';
import { exactWord, NONE_HINT, payloadFields } from '../../lib/input/payload';
import { PTZ_PAYLOAD_ACTIONS } from '../../lib/settings';
import { handleInput, type DeviceTarget } from '../action';
import { spec } from './spec';
import type { Node, NodeAPI, NodeDef } from '../red';

type Mover = PtzMover | CgiPtzMover;

interface PtzDef extends NodeDef {
  device?: string;
  api?: string;
  action?: string;
  speed?: string | number;
  duration?: string | number;
  channel?: string | number;
  overrides?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamPtzNode(this: Node, def: PtzDef): void {
    RED.nodes.createNode(this, def);
    const api = def.api || 'xml';
    const onStopError = (err: unknown): void => this.warn(`PTZ stop failed: ${err instanceof IpcamError ? err.message : 'unexpected error'}`);
    const newMover = (client: DeviceClient, onIdle?: () => void): Mover =>
      api === 'cgi' ? new CgiPtzMover(client, onStopError, onIdle) : new PtzMover(client, onStopError, onIdle);
    // One mover per device client: it owns the pending Stops of the cameras this node set moving
    // on that device, so a timed Stop goes to the camera that moved. The setting's device keeps
    // its mover; a device reached through msg.device keeps one only while a camera of it moves
    // (or a command is on its way), registered as a user of that device meanwhile, so a redeploy
    // of that device waits for the Stop. The map holds at most one entry per deployed device.
    let own: { client: DeviceClient; mover: Mover } | undefined;
    /** `uses`: inputs working with the mover now (one may be reading caps before its command). */
    const borrowed = new Map<DeviceClient, { mover: Mover; release: (settled: Promise<unknown>) => void; uses: number }>();
    let holds = 0;
    const letGo = (client: DeviceClient): void => {
      const entry = borrowed.get(client);
      if (!entry || entry.uses > 0 || !entry.mover.isIdle) return;
      borrowed.delete(client);
      entry.release(Promise.resolve());
    };
    const moverFor = (client: DeviceClient, target: DeviceTarget): Mover => {
      if (!target.borrowed) {
        if (own?.client !== client) own = { client, mover: newMover(client) };
        return own.mover;
      }
      let entry = borrowed.get(client);
      if (!entry) {
        holds = (holds + 1) % Number.MAX_SAFE_INTEGER;
        entry = { mover: newMover(client, () => letGo(client)), release: target.device.registerUser(`${this.id}#ptz-mover#${holds}`), uses: 0 };
        borrowed.set(client, entry);
      }
      entry.uses += 1;
      return entry.mover;
    };

    handleInput(RED, this, spec, def.device, async (msg, client, signal, target) => {
      if (api !== 'xml' && api !== 'cgi') throw inputError(`Unknown PTZ interface ${echo(api)}: use xml or cgi`);
      const object = payloadFields(msg.payload);
      const fields = object ?? (typeof msg.payload === 'string' && msg.payload.trim() !== '' ? { action: msg.payload } : {});
      // A message's action is spelt exactly as the interface names it: 'left' for Left is offered,
      // never moved. A text payload that is no action at all may not be meant for this node.
      if (fields['action'] !== undefined && fields['action'] !== '') fields['action'] = exactWord('PTZ action', fields['action'], PTZ_PAYLOAD_ACTIONS[api], object ? '' : NONE_HINT);
      // `{ preset }` alone goes to that preset, `{ tour }` alone starts that tour, whatever the Action setting.
      const request = { action: def.action, speed: def.speed, duration: def.duration, channel: def.channel, ...withImpliedAction(fields, def.action) };
      const mover = moverFor(client, target);
      try {
        // A timed move's message leaves when the move has ended (its Stop answered), so that a
        // move chained on the output never races the Stop.
        if (mover instanceof CgiPtzMover) {
          const command = await mover.move(request, signal, { untilEnded: true });
          const action = command.action === 'move' ? command.move : command.action;
          msg.payload = { action, ok: true };
          return ptzDone(action);
        }
        const outcome = await mover.move(request, signal, { untilEnded: true });
        if (outcome.list) {
          msg.payload = outcome.list;
          return ptzList(outcome.list.length, outcome.action === 'listTours' ? 'tours' : 'presets');
        }
        msg.payload = { action: outcome.action, ok: true };
        return ptzDone(outcome.action);
      } finally {
        // A command that moved nothing (a list, a bad input) leaves a borrowed mover idle.
        if (target.borrowed) {
          const entry = borrowed.get(client);
          if (entry?.mover === mover) entry.uses -= 1;
          letGo(client);
        }
      }
    }, def);
    this.on('close', (_removed, done) => {
      const movers = [...(own ? [{ client: own.client, mover: own.mover }] : []), ...[...borrowed].map(([client, { mover }]) => ({ client, mover }))];
      const releases = [...borrowed.values()].map((entry) => entry.release);
      borrowed.clear();
      // Node-RED closes the device node (and its client) in the same stop as this one: the Stop
      // of a camera this node set moving goes on a connection of its own.
      const closing = Promise.allSettled(
        movers.map(({ client, mover }) => {
          const via = mover.isMoving ? new DeviceClient(client.options) : undefined;
          return mover.close(via).finally(() => via?.close());
        }),
      );
      // A device reached through msg.device keeps its client until these Stops have gone.
      for (const release of releases) release(closing);
      void closing.finally(done);
    });
  }
  RED.nodes.registerType(spec.type, IpcamPtzNode as (this: never, def: never) => void);
};
