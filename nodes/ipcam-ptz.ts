import { CgiPtzMover } from '../lib/cgi/ptz';
import { echo } from '../lib/echo';
import { IpcamError, inputError } from '../lib/errors';
import { PtzMover } from '../lib/xml/ptz-mover';
import { withImpliedAction } from '../lib/ptz-request';
import { DeviceClient } from '../lib/transport/client';
import { handleInput, payloadObject } from './action';
import type { Node, NodeAPI, NodeDef } from './red';

interface PtzDef extends NodeDef {
  device?: string;
  api?: string;
  action?: string;
  speed?: string | number;
  duration?: string | number;
  channel?: string | number;
}

export = function register(RED: NodeAPI): void {
  function IpcamPtzNode(this: Node, def: PtzDef): void {
    RED.nodes.createNode(this, def);
    const api = def.api || 'xml';
    const onStopError = (err: unknown): void => this.warn(`PTZ stop failed: ${err instanceof IpcamError ? err.message : 'unexpected error'}`);
    // One mover per node and device client: it owns the pending Stop of this node's moves.
    let current: { client: DeviceClient; mover: PtzMover | CgiPtzMover } | undefined;
    const moverFor = (client: DeviceClient): PtzMover | CgiPtzMover => {
      if (current?.client !== client) current = { client, mover: api === 'cgi' ? new CgiPtzMover(client, onStopError) : new PtzMover(client, onStopError) };
      return current.mover;
    };

    handleInput(RED, this, def.device, async (msg, client, signal) => {
      if (api !== 'xml' && api !== 'cgi') throw inputError(`Unknown PTZ interface ${echo(api)}: use xml or cgi`);
      const fields = payloadObject(msg) ?? (typeof msg.payload === 'string' && msg.payload.trim() !== '' ? { action: msg.payload } : {});
      // `{ preset }` alone goes to that preset, `{ tour }` alone starts that tour, whatever the Action setting.
      const request = { action: def.action, speed: def.speed, duration: def.duration, channel: def.channel, ...withImpliedAction(fields, def.action) };
      const mover = moverFor(client);
      if (mover instanceof CgiPtzMover) {
        const command = await mover.move(request, signal);
        const action = command.action === 'move' ? command.move : command.action;
        msg.payload = { action, ok: true };
        return { fill: 'green', shape: 'dot', text: action };
      }
      const outcome = await mover.move(request, signal);
      if (outcome.list) {
        msg.payload = outcome.list;
        return { fill: 'green', shape: 'dot', text: `${outcome.list.length} ${outcome.action === 'listTours' ? 'tours' : 'presets'}` };
      }
      msg.payload = { action: outcome.action, ok: true };
      return { fill: 'green', shape: 'dot', text: outcome.action };
    });
    this.on('close', (_removed, done) => {
      if (!current) return done();
      // Node-RED closes the device node (and its client) in the same stop as this one: the Stop
      // of a camera this node set moving goes on a connection of its own.
      const own = current.mover.isMoving ? new DeviceClient(current.client.options) : undefined;
      void current.mover
        .close(own)
        .finally(() => own?.close())
        .finally(done);
    });
  }
  RED.nodes.registerType('ipcam-ptz', IpcamPtzNode as (this: never, def: never) => void);
};
