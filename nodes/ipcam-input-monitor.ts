import { checkIo, ioMonitorPath, parseIdList, parseIoLines, type IoKind } from '../lib/cgi/io';
import type { DeviceConfigNode } from './device-config';
import type { Node, NodeAPI, NodeDef } from './red';
import { clockNow, handleCommands, superviseStream } from './stream-node';

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

    handleCommands(this, control, {
      check: async (msg, send) => {
        const device = RED.nodes.getNode(def.device ?? '') as DeviceConfigNode;
        const states = await checkIo(device.getClient(), kind, ports.length > 0 ? ports : [1]);
        for (const state of states) send({ ...msg, topic: `${kind}${state.port}`, payload: state });
      },
    });
  }
  RED.nodes.registerType('ipcam-input-monitor', IpcamInputMonitorNode as (this: never, def: never) => void);
};
