import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { DedupWindow } from '../../lib/events/dedup';
import { LatestThrottle } from '../../lib/events/throttle';
import { inGroups, senderFilter } from '../../lib/events/filter';
import type { DevicePost, PlateDetection } from '../../lib/events/parse';
import { plateMessage } from '../../lib/events/plate-message';
import type { StoredSettings } from '../../lib/node-spec';
import { parseSettings } from '../../lib/settings';
import { spec } from './spec';
import { IpcamError } from '../../lib/errors/errors';
import { alive, badSetting, cleared, listenerState, noServer, plateSeen, type Status } from '../../lib/status/status';
import { setHttpPostConfig } from '../../lib/ops/http-post';
import type { DeviceConfigNode } from '../device-config';
import type { EventServerConfigNode } from '../event-config';
import type { AdminRequest, AdminResponse, Node, NodeAPI, NodeDef, NodeMessage } from '../red';

interface PlateEventDef extends NodeDef {
  server?: string;
  device?: string;
  match?: string;
}

/** Plate and keep-alive statuses: at most one a second, the latest shown (see `LatestThrottle`). */
const POST_STATUS_INTERVAL_MS = 1000;

function otherMessage(post: Exclude<DevicePost, PlateDetection>, sender: string): NodeMessage {
  const data = post.kind === 'alarmStatus' ? { alarms: post.alarms } : post.kind === 'event' ? post.data : {};
  const type = post.kind === 'event' ? post.type : post.kind;
  return { topic: type, payload: { type, time: post.time, device: post.device, sender, ...(post.kind !== 'keepalive' && post.channel !== undefined && { channel: post.channel }), data } };
}

export = function register(RED: NodeAPI): void {
  function IpcamPlateEventNode(this: Node, def: PlateEventDef & StoredSettings): void {
    RED.nodes.createNode(this, def);
    const config = def.server ? (RED.nodes.getNode(def.server) as EventServerConfigNode | null) : null;
    if (!config?.server) {
      this.status(config ? badSetting('server setting') : noServer());
      this.error(config?.problem ?? 'No event server configured: choose an ipcam-event-server');
      return;
    }
    // Parsed once, on deploy: a filter out of its rules is a red status naming it, and no plate
    // passes a filter it could not read.
    const parsed = parseSettings(spec.settings, def);
    if (parsed.refused) {
      this.status(badSetting(parsed.setting === 'lists' ? 'list filter' : parsed.setting === 'groups' ? 'group filter' : undefined));
      this.error(parsed.refused.message);
      return;
    }
    const { lists, groups, images } = parsed.settings;
    const dedupMs = parsed.settings.dedup * 1000;
    // No window, no key: nothing is built per plate for a check that admits everything.
    const dedup = dedupMs > 0 ? new DedupWindow(dedupMs) : undefined;
    const deviceNode = def.device ? (RED.nodes.getNode(def.device) as DeviceConfigNode | null) : null;
    // The device filter trusts the socket's address only: what a post says of its sender is the sender's own claim.
    const wanted = senderFilter(deviceNode?.host, def.match ?? '');

    // Held as how to make the status: at hundreds of posts a second only the one shown each second is made.
    const postStatus = new LatestThrottle<() => Status>((make) => this.status(make()), POST_STATUS_INTERVAL_MS);
    const unsubscribe = config.server.subscribe({
      onState: (state, detail) => {
        // The server's state is news of another kind: a plate status held back must not cover it.
        postStatus.cancel();
        this.status(listenerState(state, detail));
      },
      onPost: (received) => {
        for (const post of received.posts) {
          if (!wanted(post.device, received.remoteAddress)) continue;
          if (post.kind === 'keepalive') {
            const time = post.time;
            postStatus.set(() => alive(time));
            continue;
          }
          if (post.kind !== 'plate') {
            this.send([null, otherMessage(post, received.remoteAddress)]);
            continue;
          }
          if (lists && !lists.has(post.listType)) continue;
          if (!inGroups(groups, post.group)) continue;
          // Keyed by the socket's address too: a post naming another device's mac cannot silence it.
          if (dedup && !dedup.admit(`${received.remoteAddress}\u0000${post.device.mac ?? post.device.ip}\u0000${post.plate}`, received.receivedAt)) continue;
          // Only what the text needs is held till it is shown, not the post (its pictures) nor the request.
          const plate = post.plate;
          const at = received.receivedAt;
          postStatus.set(() => plateSeen(plate, at));
          this.send([plateMessage(post, received.remoteAddress, images), null]);
        }
      },
    });
    this.on('close', (_removed, done) => {
      unsubscribe();
      postStatus.cancel();
      this.status(cleared());
      done();
    });
  }
  RED.nodes.registerType(spec.type, IpcamPlateEventNode as (this: never, def: never) => void);

  // "Send this server to the device": points a deployed device at a deployed event server.
  RED.httpAdmin.post('/ipcam-plate-event/configure-device', RED.auth.needsPermission('ipcam-plate-event.write'), (req: AdminRequest, res: AdminResponse) => {
    void configureDevice(RED, req.body).then((answer) => res.json(answer));
  });
};

async function configureDevice(RED: NodeAPI, body: unknown): Promise<object> {
  const form = (typeof body === 'object' && body !== null ? body : {}) as { device?: string; server?: string; serverIp?: string };
  try {
    const device = form.device ? (RED.nodes.getNode(form.device) as DeviceConfigNode | null) : null;
    const config = form.server ? (RED.nodes.getNode(form.server) as EventServerConfigNode | null) : null;
    // The ids must name nodes of those types: any other node has no client or listener to use.
    if (device?.type !== 'ipcam-device' || config?.type !== 'ipcam-event-server' || !config.server) throw new IpcamError('EINPUT', 'Deploy the device and the event server first, then try again');
    const client = device.getClient();
    const serverIp = form.serverIp?.trim() || (await localAddressToward(client.options.host));
    const target = await setHttpPostConfig(client, { serverIp, serverPort: config.server.port, path: config.server.path });
    return { ok: true, target };
  } catch (err) {
    const e = err instanceof IpcamError ? err : new IpcamError('ECONN', 'Configuring the device failed unexpectedly');
    return { ok: false, error: { code: e.code, message: e.message } };
  }
}

/** The address of this host on the route to the device: a UDP connect sends nothing. */
function localAddressToward(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
    socket.on('error', (err) => {
      socket.close();
      reject(new IpcamError('ECONN', `Cannot find the local address toward ${host}: ${err.message}`));
    });
    socket.connect(9, host, () => {
      const address = socket.address().address;
      socket.close();
      resolve(address);
    });
  });
}
