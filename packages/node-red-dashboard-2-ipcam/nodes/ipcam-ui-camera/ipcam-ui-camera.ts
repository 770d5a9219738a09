/**
 * ipcam-ui-camera: a camera on a Dashboard 2 page. The live view is snapshots this node takes
 * (the browser never learns the device's address or credentials), one per tick for every
 * client together and none while nobody shows the widget (lib/widgets/frame-ticker), paced per device
 * across every widget that shows it, and none after a refused password until the device is
 * online again. PTZ presses are timed moves of the same movers as ipcam-ptz: one client holds the
 * pad at a time, until its release, its leaving, its page hidden or the timed Stop; a release
 * sends the one Stop. A browser asks only the actions of lib/widgets/actions; the device, the
 * picture, the plate and pause come from wired messages only.
 */
import { takeSnapshot } from 'node-red-contrib-ipcam/dist/lib/ops/snapshot';
import { CgiPtzMover } from 'node-red-contrib-ipcam/dist/lib/ops/ptz-cgi';
import { PtzMover } from 'node-red-contrib-ipcam/dist/lib/ops/ptz-mover';
import { FrameTicker, pacerFor, type FramePacer, type FrameResult } from 'node-red-contrib-ipcam/dist/lib/widgets/frame-ticker';
import { checkCameraSettings, type CameraSettings } from 'node-red-contrib-ipcam/dist/lib/widgets/settings';
import { PAD_MOVES, cameraAction, refused } from 'node-red-contrib-ipcam/dist/lib/widgets/actions';
import { IpcamError } from 'node-red-contrib-ipcam/dist/lib/errors/errors';
import type { DeviceClient } from 'node-red-contrib-ipcam/dist/lib/transport/client';
import { plainReason } from 'node-red-contrib-ipcam/dist/lib/errors/refusal';
import { badSetting, failed, noDevice, paused, viewing as viewers } from 'node-red-contrib-ipcam/dist/lib/status/status';
import type { DeviceConfigNode } from 'node-red-contrib-ipcam/dist/nodes/device-config';
import { deviceNamed } from 'node-red-contrib-ipcam/dist/nodes/device-lookup';
import { Clients, registerWidget, serverEvent, type DashboardConnection } from '../ui-dashboard';
import { plateRow, type PlateRow } from '../ui-plate-row';
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

/** Longest a press moves the camera without its release: the timed move's own Stop follows then, and the pad is free again. */
const PRESS_MAX_MS = 20_000;
type Mover = PtzMover | CgiPtzMover;

interface Frame {
  image: Buffer;
  contentType: string;
}

/**
 * The camera as the widget shows it, one word each (the component shows them as words with a
 * colour): live, paused, waiting (no frame yet), offline (no answer), auth-failed (password
 * refused), error (another failure), no-device.
 */
type ViewState = 'live' | 'paused' | 'waiting' | 'offline' | 'auth-failed' | 'error' | 'no-device';

/** A snapshot's failure as ours: what is not an IpcamError (a bug, a library's own error) is told by its code only. */
function asIpcamError(err: unknown): IpcamError {
  return err instanceof IpcamError ? err : new IpcamError('EPARSE', 'unexpected failure');
}

/** What a client is told of a failure: the code and a short reason, never the device's own text (it may hold its address). */
function failureText(err: unknown): string {
  const e = asIpcamError(err);
  return `${e.code}: ${plainReason(e)}`;
}

function stateOf(err: unknown): ViewState {
  const e = asIpcamError(err);
  if (e.code === 'EAUTH') return 'auth-failed';
  if (e.code === 'ECONN' || e.code === 'ETIMEOUT') return 'offline';
  return 'error';
}

/** What stands for a refused password while no login is tried: shown, never sent to the device. */
const WAITING_FOR_DEVICE = new IpcamError('EAUTH', 'The camera refused the password: no new login until it is online again');

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
    node.status(badSetting());
    node.error(err instanceof Error ? err.message : 'bad setting');
    return;
  }
  const { source, rate, api, presets } = settings;
  // Read before Dashboard 2 registers the widget: it deletes `wires` from the settings it is given.
  const outputWired = Array.isArray(def['wires']) && (def['wires'] as unknown[]).some((w) => Array.isArray(w) && w.length > 0);

  let device = def.device ? (RED.nodes.getNode(def.device) as DeviceConfigNode | null) : null;
  /**
   * How the output names the device shown, as `msg.device`: the value of the `msg.device` that
   * chose it, else the setting's id. The next ipcam node (or an audit of who moved which camera)
   * addresses the same device with it.
   */
  let deviceRef = device ? def.device : undefined;
  let release = device?.registerUser(node.id);
  let paced = pacerFor<Frame>(device ?? node);
  let mover: Mover | undefined;
  let moverClient: DeviceClient | undefined;
  /** The client whose press holds the pad, until its release, its leaving or the timed Stop. */
  let holder: { client: string; timer: NodeJS.Timeout } | undefined;
  /** PTZ commands of this widget go one after the other: a release never overtakes its press. */
  let ptzChain: Promise<unknown> = Promise.resolve();
  let lastFrame: Frame | undefined;
  let lastPlate: PlateRow | undefined;
  let shown: { image?: string; at: number } | undefined;
  let failure: { text: string; state: ViewState; at: number } | undefined;

  const clients = new Clients((conn) => gone(conn));
  const viewState = (): ViewState => {
    if (!device) return 'no-device';
    if (ticker.isPaused) return 'paused';
    if (failure) return failure.state;
    return shown?.image ? 'live' : 'waiting';
  };
  const view = (): Record<string, unknown> => ({
    view: {
      state: viewState(),
      ...(shown && { frame: shown }),
      ...(failure && { error: failure.text }),
      ...(def.showPlates && lastPlate && { plate: lastPlate }),
    },
  });
  const publish = (): void => clients.emit(event, view());
  /** A word to one client about its own action (a frame sent, the pad held by another). */
  const notify = (conn: DashboardConnection, notice: string): void => void conn.emit(event, { notice });
  const viewing = (): void =>
    node.status(viewers(ticker.viewerCount));
  const deliver = (result: FrameResult<Frame>): void => {
    if (result.ok) {
      lastFrame = result.frame;
      shown = { image: `data:${result.frame.contentType};base64,${result.frame.image.toString('base64')}`, at: result.at };
      failure = undefined;
      viewing();
    } else {
      failure = { text: failureText(result.error), state: stateOf(result.error), at: result.at };
      node.status(failed(asIpcamError(result.error), device ?? undefined));
    }
    publish();
  };
  const ticker: FrameTicker<Frame> = new FrameTicker<Frame>({
    rate,
    deliver,
    pacer: paced.pacer,
    source,
    // After a refused password no login is tried until the device answers again (accounts lock
    // after a few failures): whoever else uses the device brings its health back to online.
    blocked: () => (device?.health.state === 'auth-failed' ? WAITING_FOR_DEVICE : undefined),
    fetch: async (signal) => {
      if (!device) throw new IpcamError('EINPUT', 'no device');
      const snapshot = await takeSnapshot(device.getClient(), { source, signal });
      return { image: snapshot.image, contentType: snapshot.contentType };
    },
  });
  node.status(device ? viewers(0) : noDevice());

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
    ptzChain = ptzChain.then(work).catch((err: unknown) => {
      failure = { text: failureText(err), state: stateOf(err), at: Date.now() };
      publish();
    });
  };
  const freePad = (): void => {
    if (holder) clearTimeout(holder.timer);
    holder = undefined;
  };
  /**
   * The release of `conn`'s press: one Stop, queued after the move. Who pressed is noted when the
   * press arrives, not when its move is sent: a press and its release can come in one batch.
   */
  const releaseBy = (conn: DashboardConnection): boolean => {
    if (holder?.client !== conn.id) return false;
    freePad();
    ptz(async () => {
      // A press held past PRESS_MAX_MS was already stopped by its timed Stop: no second one.
      if (mover?.isMoving) await mover.move(stopCommand());
    });
    return true;
  };

  const gone = (conn: DashboardConnection): void => {
    ticker.unwatch(conn.id);
    releaseBy(conn);
    viewing();
  };

  const onAction = (conn: DashboardConnection, msg: unknown): string | undefined => {
    const asked = cameraAction(msg, { ptz: api, presets });
    if (refused(asked)) return asked.refused;
    // Only a client that shows the widget acts on it (a watch comes first, from every page).
    if (asked.action !== 'watch' && asked.action !== 'unwatch' && asked.action !== 'release' && !clients.has(conn)) return `${asked.action} from a client that does not show the widget`;
    switch (asked.action) {
      case 'watch':
        if (!clients.add(conn) || !ticker.watch(conn.id)) return 'too many viewers';
        conn.emit(event, view());
        viewing();
        return undefined;
      case 'unwatch':
        clients.remove(conn);
        gone(conn);
        return undefined;
      case 'press': {
        if (holder !== undefined) {
          if (holder.client !== conn.id) notify(conn, 'another viewer is moving the camera');
          return undefined;
        }
        const client = conn.id;
        const timer = setTimeout(() => {
          // The timed move has stopped the camera: the pad is free for every viewer again.
          if (holder?.client === client) holder = undefined;
        }, PRESS_MAX_MS);
        holder = { client, timer };
        const move = asked.move;
        send({ action: move });
        ptz(async () => {
          await moverNow().move(api === 'cgi' ? { action: PAD_MOVES[move], duration: PRESS_MAX_MS } : { action: move, duration: PRESS_MAX_MS });
        });
        return undefined;
      }
      case 'release':
        if (releaseBy(conn)) send({ action: 'Stop' });
        return undefined;
      case 'preset': {
        const value = /^\d+$/.test(asked.preset) ? Number(asked.preset) : asked.preset;
        send({ preset: value });
        ptz(() => moverNow().move({ action: 'gotoPreset', preset: value }));
        return undefined;
      }
      case 'save':
        if (!lastFrame) {
          notify(conn, 'no frame to send yet');
          return undefined;
        }
        send({ snapshot: lastFrame.image }, { contentType: lastFrame.contentType });
        notify(conn, outputWired ? 'frame sent to the flow' : "frame not used: nothing is wired to this widget's output");
        return undefined;
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
        const oldPaced = paced;
        freePad();
        mover = undefined;
        moverClient = undefined;
        release = next.registerUser(`${node.id}#ui-camera`);
        device = next;
        paced = pacerFor<Frame>(next);
        ticker.setPacer(paced.pacer as FramePacer<Frame>);
        oldPaced.release();
        shown = undefined;
        failure = undefined;
        // The camera left behind is stopped if this widget set it moving.
        oldRelease?.(oldMover ? oldMover.close() : Promise.resolve());
        publish();
      }
    }
    if (p === 'pause') ticker.pause();
    else if (p === 'resume') ticker.resume();
    else if (Buffer.isBuffer(p)) deliver({ ok: true, frame: { image: p, contentType: typeof msg['contentType'] === 'string' && /^image\/(jpeg|png)$/.test(msg['contentType']) ? msg['contentType'] : 'image/jpeg' }, at: Date.now() });
    else if (typeof p === 'object' && p !== null && typeof (p as Record<string, unknown>)['plate'] === 'string') {
      lastPlate = plateRow(p);
      if (def.showPlates) publish();
      return;
    }
    if (p === 'pause' || p === 'resume') {
      node.status(paused(ticker.isPaused));
      publish();
    }
  };

  registerWidget(RED, node, def, 'IpcamUiCamera', { onAction, onGone: gone, onInput });
  node.on('close', (_removed, done) => {
    ticker.close();
    paced.release();
    freePad();
    clients.close();
    const closing = ptzChain.then(() => mover?.close());
    release?.(closing);
    void closing.finally(done);
  });
}
