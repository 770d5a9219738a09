import { DeviceClient } from '../../lib/transport/client';
import { DeviceHealth } from '../../lib/health/device-health';
import { Heartbeat } from '../../lib/health/heartbeat';
import { heartbeatMs } from '../../lib/health/heartbeat-setting';
import { destinationChanges, resolveDeviceOptions, type DeviceOptions, type DestinationSetting } from '../../lib/transport/options';
import { identifyDevice } from '../../lib/ops/device-info';
import { IpcamError } from '../../lib/errors/errors';
import type { DeviceConfigNode, DeviceCredentials } from '../device-config';
import { DeviceUsers } from '../device-users';
import { registerSearchEndpoint } from '../discover-admin';
import { healthBoard } from '../health-board';
import type { AdminRequest, AdminResponse, NodeAPI, NodeDef } from '../red';

interface DeviceDef extends NodeDef {
  host?: string;
  port?: string | number;
  protocol?: string;
  auth?: string;
  tlsVerify?: boolean | string;
  timeout?: string | number;
  ca?: string;
  heartbeat?: string | number;
}

/** The editor sends this instead of a password it has not changed. */
const UNCHANGED_PASSWORD = '__PWRD__';

/** Editor settings (strings, blanks) to lib options; lib does the validation. */
function toDeviceOptions(def: DeviceDef, credentials: Partial<DeviceCredentials> | undefined): DeviceOptions {
  const options: DeviceOptions = {
    host: def.host ?? '',
    protocol: (def.protocol || 'http') as DeviceOptions['protocol'],
    auth: (def.auth as DeviceOptions['auth']) || 'auto',
    tlsVerify: def.tlsVerify !== false && def.tlsVerify !== 'false',
    username: credentials?.username ?? '',
    password: credentials?.password ?? '',
  };
  const port = blankToUndefined(def.port);
  if (port !== undefined) options.port = Number(port);
  const timeout = blankToUndefined(def.timeout);
  if (timeout !== undefined) options.timeout = Number(timeout);
  if (def.ca) options.ca = def.ca;
  return options;
}

function blankToUndefined(value: string | number | undefined): string | number | undefined {
  return value === undefined || (typeof value === 'string' && value.trim() === '') ? undefined : value;
}

export = function register(RED: NodeAPI): void {
  function IpcamDeviceNode(this: DeviceConfigNode, def: DeviceDef): void {
    RED.nodes.createNode(this, def);
    this.host = (def.host ?? '').trim();
    const health = new DeviceHealth();
    this.health = health;
    let client: DeviceClient | undefined;
    let configError: IpcamError | undefined;
    try {
      client = new DeviceClient(toDeviceOptions(def, this.credentials), health);
    } catch (err) {
      configError = err instanceof IpcamError ? err : new IpcamError('EINPUT', String(err));
      this.warn(`Device settings: ${configError.message}`);
    }
    this.getClient = () => {
      if (!client) throw configError as IpcamError;
      return client;
    };
    let interval = 0;
    try {
      interval = heartbeatMs(def.heartbeat);
    } catch (err) {
      this.warn(`Device settings: ${err instanceof Error ? err.message : String(err)}; the heartbeat is off`);
    }
    this.heartbeat = client ? interval : 0;
    const heartbeat = client ? new Heartbeat({ client, health, interval }) : undefined;
    heartbeat?.start();
    healthBoard.add({ id: this.id, name: this.name || (def.host ?? '').trim() || this.id, host: this.host, health, wanted: () => heartbeat?.wanted() });
    const users = new DeviceUsers();
    this.registerUser = (userId) => users.register(userId);
    this.isClosing = () => users.closing;
    this.on('close', (_removed, done) => {
      heartbeat?.close();
      healthBoard.remove(this.id, health);
      void users
        .settled()
        .then(() => client?.close())
        .finally(() => {
          health.close();
          done();
        });
    });
  }

  RED.nodes.registerType('ipcam-device', IpcamDeviceNode as (this: never, def: never) => void, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });

  // "Test connection" in the editor: tries the settings as they stand in the dialog.
  RED.httpAdmin.post('/ipcam-device/test', RED.auth.needsPermission('ipcam-device.write'), (req: AdminRequest, res: AdminResponse) => {
    void testConnection(RED, req.body).then((answer) => res.json(answer));
  });
  // "Search network" in the editor: a WS-Discovery search, see discover-admin.ts.
  registerSearchEndpoint(RED);
};

/** The deployed ipcam-device of that id, if any. */
function deployedDevice(RED: NodeAPI, id: unknown): DeviceConfigNode | undefined {
  const node = typeof id === 'string' ? RED.nodes.getNode(id) : null;
  return typeof node === 'object' && node !== null && (node as { type?: unknown }).type === 'ipcam-device' ? (node as DeviceConfigNode) : undefined;
}

type TestAnswer = { ok: true; identity: object } | { ok: false; error: { code: string; message: string } };

async function testConnection(RED: NodeAPI, body: unknown): Promise<TestAnswer> {
  const form = (typeof body === 'object' && body !== null ? body : {}) as DeviceDef & Partial<DeviceCredentials> & { id?: string };
  let client: DeviceClient | undefined;
  try {
    const useStored = form.password === UNCHANGED_PASSWORD || form.password === undefined;
    const credentials = useStored ? lentCredentials(RED, form) : { username: form.username ?? '', password: form.password as string };
    client = new DeviceClient(toDeviceOptions(form, credentials));
    return { ok: true, identity: await identifyDevice(client) };
  } catch (err) {
    const e = err instanceof IpcamError ? err : new IpcamError('ECONN', 'Test failed');
    return { ok: false, error: { code: e.code, message: e.message } };
  } finally {
    await client?.close();
  }
}

/**
 * The stored credentials, lent only to the deployed ipcam-device of the form's id and only when
 * the form reaches exactly that device the same way: host, port, protocol, auth mode, TLS
 * verification and CA as the deployed node has them (defaults filled in). Anything else must
 * bring its own password: EINPUT, nothing sent. The dialog must never be a way to send a saved
 * password to another listener, nor over a weaker connection.
 */
function lentCredentials(RED: NodeAPI, form: DeviceDef & Partial<DeviceCredentials> & { id?: string }): DeviceCredentials {
  // The form's own settings are checked first: a bad setting is named as such.
  const wanted = resolveDeviceOptions(toDeviceOptions(form, { username: '', password: '' }));
  const device = deployedDevice(RED, form.id);
  if (!device) throw new IpcamError('EINPUT', 'No password is stored for this device yet: enter the password to test the connection');
  let deployed: DeviceClient;
  try {
    deployed = device.getClient();
  } catch {
    throw new IpcamError('EINPUT', 'The deployed device has a bad setting: enter the password to test these settings');
  }
  const changed = destinationChanges(deployed.options, wanted);
  if (changed.length > 0) throw new IpcamError('EINPUT', `The ${listed(changed)} changed: enter the password again to test these settings (the stored password goes only to the device as deployed)`);
  const stored = RED.nodes.getCredentials(device.id);
  return { username: form.username ?? stored?.['username'] ?? '', password: stored?.['password'] ?? '' };
}

function listed(settings: DestinationSetting[]): string {
  return settings.length === 1 ? (settings[0] as string) : `${settings.slice(0, -1).join(', ')} and ${settings[settings.length - 1] as string}`;
}
