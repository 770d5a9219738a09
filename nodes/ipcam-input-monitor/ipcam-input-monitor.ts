import { IoEdgeTracker, checkIo, ioMonitorPath, parseIoLines, type IoReport } from '../../lib/ops/io';
import type { StoredSettings } from '../../lib/node-spec';
import { parseSettings } from '../../lib/settings';
import { spec } from './spec';
import { IpcamError } from '../../lib/errors/errors';
import { FailureThrottle } from '../../lib/stream/supervisor';
import type { DeviceConfigNode } from '../device-config';
import type { Node, NodeAPI, NodeDef } from '../red';
import { ioEvent } from '../../lib/status/status';
import { handleCommands, refuseStream, reportStreamFailure, superviseStream } from '../stream-node';

interface InputMonitorDef extends NodeDef {
  device?: string;
}

export = function register(RED: NodeAPI): void {
  function IpcamInputMonitorNode(this: Node, def: InputMonitorDef & StoredSettings): void {
    RED.nodes.createNode(this, def);
    // Parsed once, on deploy (DESIGN): a bad Kind or Ports is a red status, every message its EINPUT.
    const parsed = parseSettings(spec.settings, def);
    if (parsed.refused) return refuseStream(this, parsed.refused);
    const kind = parsed.settings.kind ?? 'input';
    const ports = parsed.settings.ports ?? [];
    const tracker = new IoEdgeTracker();
    const readFailures = new FailureThrottle();
    let reading: AbortController | undefined;
    const deviceClient = () => (RED.nodes.getNode(def.device ?? '') as DeviceConfigNode).getClient();

    const emit = (reports: IoReport[]): void => {
      for (const { state, resync } of reports) {
        this.send({ topic: `${kind}${state.port}`, payload: state, resync });
        control?.showEvent(ioEvent(state.port, state.active));
      }
    };

    /** On every (re)connect: what changed while the stream was down (and the first states). */
    const resync = (): void => {
      const controller = new AbortController();
      reading = controller;
      const signal = controller.signal;
      tracker
        .resync(() => checkIo(deviceClient(), kind, tracker.portsToRead(ports), signal), signal)
        .then(
          (reports) => {
            readFailures.rearm();
            emit(reports);
          },
          (err: unknown) => {
            if (signal.aborted) return;
            const error = err instanceof IpcamError ? err : new IpcamError('EPARSE', String(err));
            if (readFailures.admit(error)) reportStreamFailure(this, error, { state: 'resync' });
          },
        )
        .finally(() => {
          if (reading === controller) reading = undefined;
        });
    };

    const control = superviseStream(
      RED,
      this,
      def.device,
      () => ioMonitorPath(kind, ports),
      (part) => emit(tracker.fromStream(parseIoLines(part.body.toString('latin1')))),
      {
        onState: (state) => {
          // A read of an older connection is no use: the next connect reads again.
          reading?.abort();
          if (state === 'connected') resync();
        },
      },
    );
    if (!control) return;
    this.on('close', (_removed, done) => {
      reading?.abort();
      done();
    });
    control.start();

    handleCommands(this, control, {
      check: async (msg, send) => {
        const states = await checkIo(deviceClient(), kind, ports.length > 0 ? ports : [1]);
        for (const state of states) send({ ...msg, topic: `${kind}${state.port}`, payload: state });
      },
    });
  }
  RED.nodes.registerType(spec.type, IpcamInputMonitorNode as (this: never, def: never) => void);
};
