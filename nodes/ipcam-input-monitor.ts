import { IpcamError } from '../lib/errors';
import { checkIo, ioMonitorPath, parseIdList, parseIoLines, type IoKind } from '../lib/cgi/io';
import { shortReason } from './action';
import type { DeviceConfigNode } from './device-config';
import type { Node, NodeAPI, NodeDef } from './red';
import { clockNow, superviseStream } from './stream-node';

interface InputMonitorDef extends NodeDef {
  device?: string;
  kind?: string;
  ports?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamInputMonitorNode(this: Node, def: InputMonitorDef): void {
    RED.nodes.createNode(this, def);
    const kind = (def.kind || 'input') as IoKind;
    let ports: number[] = [];
    const control = superviseStream(
      RED,
      this,
      def.device,
      () => {
        ports = parseIdList(def.ports, 'Ports');
        return ioMonitorPath(kind, ports);
      },
      (part) => {
        for (const state of parseIoLines(part.body.toString('latin1'))) {
          this.send({ topic: `${kind}${state.port}`, payload: state });
          control?.showEvent(`IO${state.port} ${state.active ? 'on' : 'off'} ${clockNow()}`);
        }
      },
    );
    if (!control) return;
    control.start();

    this.on('input', (msg, send, done) => {
      const command = typeof msg.payload === 'string' ? msg.payload.trim().toLowerCase() : '';
      if (command === 'start') return void (control.start(), done());
      if (command === 'stop') return void control.stop().then(() => done());
      if (command !== 'check') {
        const error = new IpcamError('EINPUT', `Unknown command ${JSON.stringify(msg.payload)}: send 'start', 'stop' or 'check'`);
        msg['error'] = error.toJSON();
        return done(error);
      }
      const device = RED.nodes.getNode(def.device ?? '') as DeviceConfigNode;
      void checkIo(device.getClient(), kind, ports.length > 0 ? ports : [1])
        .then((states) => {
          for (const state of states) send({ ...msg, topic: `${kind}${state.port}`, payload: state });
          done();
        })
        .catch((err: unknown) => {
          const error = err instanceof IpcamError ? err : new IpcamError('EPARSE', String(err));
          msg['error'] = error.toJSON();
          this.status({ fill: 'red', shape: 'ring', text: shortReason(error) });
          done(error);
        });
    });
  }
  RED.nodes.registerType('ipcam-input-monitor', IpcamInputMonitorNode as (this: never, def: never) => void);
};
