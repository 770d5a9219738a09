/**
 * ipcam-ui-camera: a camera on a Dashboard 2 page. The live view is snapshots this node takes
 * (the browser never learns the device's address or credentials), one per tick for every
 * client together and none while nobody shows the widget (lib/frame-ticker). PTZ presses are
 * timed moves of the same movers as ipcam-ptz: a release sends the one Stop, and a client that
 * goes away while its press holds the camera moving stops it.
 */
import { takeSnapshot } from 'node-red-contrib-ipcam/dist/lib/ops/snapshot';
import { CgiPtzMover } from 'node-red-contrib-ipcam/dist/lib/ops/ptz-cgi';
import { PtzMover } from 'node-red-contrib-ipcam/dist/lib/ops/ptz-mover';
import { FrameTicker, type FrameResult } from 'node-red-contrib-ipcam/dist/lib/frame-ticker';
import { checkCameraSettings, type CameraSettings } from 'node-red-contrib-ipcam/dist/lib/widget-settings';
import { IpcamError } from 'node-red-contrib-ipcam/dist/lib/errors';
import type { DeviceClient } from 'node-red-contrib-ipcam/dist/lib/transport/client';
import { plainReason } from 'node-red-contrib-ipcam/dist/lib/refusal';
import type { DeviceConfigNode } from 'node-red-contrib-ipcam/dist/nodes/device-config';
import { deviceNamed } from 'node-red-contrib-ipcam/dist/nodes/device-lookup';
import { Clients, registerWidget, serverEvent, type ClientMessage, type DashboardConnection } from './ui-dashboard';
import { plateRow, type PlateRow } from './ui-plate-row';
import type { Node, NodeAPI, NodeDef, NodeMessage } from 'node-red-contrib-ipcam/dist/nodes/red';

interface CameraDef extends NodeDef {
  group?: string;
  device?: string;
  source?: string;
  rate?: string | number;
  ptz?: string;
  presets?: string;
  showPlates?: boolean;
  label?: string;
}

/** Longest a press moves the camera without its release: the timed move's own Stop follows then. */
const PRESS_MAX_MS = 20_000;
/** The pad's directions and zoom, by the XML action; the CGI interface has the directions only. */
const PAD: Record<string, string | undefined> = {
  Up: 'up',
  Down: 'down',
  Left: 'left',
  Right: 'right',
  LeftUp: 'upleft',
  RightUp: 'upright',
  LeftDown: 'downleft',
  RightDown: 'downright',
  ZoomIn: undefined,
  ZoomOut: undefined,
};
type Mover = PtzMover | CgiPtzMover;

interface Frame {
  image: Buffer;
  contentType: string;
}

/** What a client is told of a failure: the code and a short reason, never the device's own text (it may hold its address). */
function failureText(err: unknown): string {
  const e = err instanceof IpcamError ? err : new IpcamError('EPARSE', 'unexpected failure');
  return `${e.code}: ${plainReason(e)}`;
}

export = function register(RED: NodeAPI): void {
  function IpcamUiCameraNode(this: Node, def: CameraDef): void {
    RED.nodes.createNode(this, def);
    camera(RED, this, def);
  }
  RED.nodes.registerType('ipcam-ui-camera', IpcamUiCameraNode as (this: never, def: never) => void);
};

function camera(RED: NodeAPI, node: Node, def: CameraDef): void {
  const event = serverEvent(node.id);
  // The settings as the dialog checks them: a bad one starts nothing.
  let settings: CameraSettings;
  try {
    settings = checkCameraSettings(def);
  } catch (err) {
    node.status({ fill: 'red', shape: 'ring', text: 'bad setting' });
    node.error(err instanceof Error ? err.message : 'bad setting');
    return;
  }
  const { source, rate, api, presets } = settings;

  let device = def.device ? (RED.nodes.getNode(def.device) as DeviceConfigNode | null) : null;
  /**
   * How the output names the device shown, as `msg.device`: the value of the `msg.device` that
   * chose it, else the setting's id. The next ipcam node (or an audit of who moved which camera)
   * addresses the same device with it.
   */
  let deviceRef = device ? def.device : undefined;
  let release = device?.registerUser(node.id);
  let mover: Mover | undefined;
  let moverClient: DeviceClient | undefined;
  /** The client whose press holds the camera moving, if any. */
  let pressedBy: string | undefined;
  /** PTZ commands of this widget go one after the other: a release never overtakes its press. */
  let ptzChain: Promise<unknown> = Promise.resolve();
  let lastFrame: Frame | undefined;
  let lastPlate: PlateRow | undefined;
  let shown: { image?: string; error?: string; at: number } | undefined;

  const clients = new Clients((conn) => gone(conn));
  const publish = (): void => clients.emit(event, { frame: shown, plate: def.showPlates ? lastPlate : undefined, paused: ticker.isPaused });
  const deliver = (result: FrameResult<Frame>): void => {
    if (result.ok) {
      lastFrame = result.frame;
      shown = { image: `data:${result.frame.contentType};base64,${result.frame.image.toString('base64')}`, at: result.at };
      node.status({ fill: 'green', shape: 'dot', text: `${clients.size} viewing` });
    } else {
      shown = { error: failureText(result.error), at: result.at };
      node.status({ fill: 'red', shape: 'ring', text: shown.error });
    }
    publish();
  };
  const ticker = new FrameTicker<Frame>({
    rate,
    deliver,
    fetch: async (signal) => {
      if (!device) throw new IpcamError('EINPUT', 'no device');
      const snapshot = await takeSnapshot(device.getClient(), { source, signal });
      return { image: snapshot.image, contentType: snapshot.contentType };
    },
  });
  node.status(device ? { fill: 'grey', shape: 'ring', text: 'nobody viewing' } : { fill: 'red', shape: 'ring', text: 'no device' });

  const moverNow = (): Mover => {
    if (!device) throw new IpcamError('EINPUT', 'No device: choose an ipcam-device in the widget settings or send msg.device');
    const client = device.getClient();
    if (!mover || moverClient !== client) {
      const onStopError = (err: unknown): void => node.warn(`PTZ stop failed: ${failureText(err)}`);
      mover = api === 'cgi' ? new CgiPtzMover(client, onStopError) : new PtzMover(client, onStopError);
      moverClient = client;
    }
    return mover;
  };
  /** A user's action, on the output. */
  const send = (payload: Record<string, unknown>, extra: Record<string, unknown> = {}): void => {
    node.send({ payload, ...extra, ...(deviceRef !== undefined ? { device: deviceRef } : {}) });
  };
  const stopCommand = (): { action: string } => ({ action: api === 'cgi' ? 'stop' : 'Stop' });
  /** Queues one PTZ command; its failure is shown on the widget. */
  const ptz = (work: () => Promise<unknown>): void => {
    ptzChain = ptzChain
      .then(work)
      .catch((err: unknown) => {
        shown = { ...(shown ?? { at: Date.now() }), error: failureText(err) };
        publish();
      });
  };
  /**
   * The release of `conn`'s press: one Stop, queued after the move. Who pressed is noted when the
   * press arrives, not when its move is sent: a press and its release can come in one batch.
   */
  const releaseBy = (conn: DashboardConnection): boolean => {
    if (pressedBy !== conn.id) return false;
    pressedBy = undefined;
    ptz(async () => {
      // A press held past PRESS_MAX_MS was already stopped by its timed Stop: no second one.
      if (mover?.isMoving) await mover.move(stopCommand());
    });
    return true;
  };

  const gone = (conn: DashboardConnection): void => {
    ticker.unwatch(conn.id);
    releaseBy(conn);
    node.status(ticker.viewerCount > 0 ? { fill: 'green', shape: 'dot', text: `${ticker.viewerCount} viewing` } : { fill: 'grey', shape: 'ring', text: 'nobody viewing' });
  };

  const onClient = (conn: DashboardConnection, msg: ClientMessage): void => {
    switch (msg.kind) {
      case 'watch':
        if (!clients.add(conn) || !ticker.watch(conn.id)) return;
        conn.emit(event, { frame: shown, plate: def.showPlates ? lastPlate : undefined, paused: ticker.isPaused });
        return;
      case 'unwatch':
        clients.remove(conn);
        gone(conn);
        return;
      case 'press': {
        if (!clients.has(conn) || api === 'none') return;
        const action = typeof msg['action'] === 'string' && Object.hasOwn(PAD, msg['action']) ? msg['action'] : undefined;
        if (!action || (api === 'cgi' && PAD[action] === undefined)) return;
        if (pressedBy !== undefined) return;
        pressedBy = conn.id;
        send({ action });
        ptz(async () => {
          await moverNow().move(api === 'cgi' ? { action: PAD[action], duration: PRESS_MAX_MS } : { action, duration: PRESS_MAX_MS });
        });
        return;
      }
      case 'release':
        if (releaseBy(conn)) send({ action: 'Stop' });
        return;
      case 'preset': {
        if (!clients.has(conn) || api === 'none') return;
        const preset = presets.find((p) => p === msg['preset']);
        if (preset === undefined) return;
        const value = /^\d+$/.test(preset) ? Number(preset) : preset;
        send({ preset: value });
        ptz(() => moverNow().move({ action: 'gotoPreset', preset: value }));
        return;
      }
      case 'save':
        if (!clients.has(conn) || !lastFrame) return;
        send({ snapshot: lastFrame.image }, { contentType: lastFrame.contentType });
        return;
      default:
        return;
    }
  };

  const onInput = (msg: NodeMessage): void => {
    const p = msg.payload;
    if (msg['device'] !== undefined) {
      const named: unknown = msg['device'];
      const next = deviceNamed(RED, node, named);
      if (typeof named === 'string') deviceRef = named;
      if (next !== device) {
        const oldMover = mover;
        const oldRelease = release;
        pressedBy = undefined;
        mover = undefined;
        moverClient = undefined;
        release = next.registerUser(`${node.id}#ui-camera`);
        device = next;
        // The camera left behind is stopped if this widget set it moving.
        oldRelease?.(oldMover ? oldMover.close() : Promise.resolve());
      }
    }
    if (p === 'pause') ticker.pause();
    else if (p === 'resume') ticker.resume();
    else if (Buffer.isBuffer(p)) deliver({ ok: true, frame: { image: p, contentType: typeof msg['contentType'] === 'string' && /^image\/(jpeg|png)$/.test(msg['contentType']) ? msg['contentType'] : 'image/jpeg' }, at: Date.now() });
    else if (typeof p === 'object' && p !== null && typeof (p as Record<string, unknown>)['plate'] === 'string') {
      lastPlate = plateRow(p as Record<string, unknown>);
      if (def.showPlates) publish();
      return;
    }
    if (p === 'pause' || p === 'resume') {
      node.status(ticker.isPaused ? { fill: 'grey', shape: 'ring', text: 'paused' } : { fill: 'green', shape: 'dot', text: 'resumed' });
      publish();
    }
  };

  registerWidget(RED, node, def, 'IpcamUiCamera', { onClient, onGone: gone, onInput });
  node.on('close', (_removed, done) => {
    ticker.close();
    clients.close();
    const closing = ptzChain.then(() => mover?.close());
    release?.(closing);
    void closing.finally(done);
  });
}
