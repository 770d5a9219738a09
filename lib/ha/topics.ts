/**
 * The topics of one camera on the broker. Only the settings' words and the object id appear in
 * them: never the device's address, user name or anything else private.
 */

/**
 * The object id of a camera (DESIGN): `ipcam_` and its device node's id, every character outside
 * `[a-zA-Z0-9_-]` as `_`. Node ids are stable across restarts and redeploys, so is this.
 */
export function objectIdOf(deviceNodeId: string): string {
  return `ipcam_${deviceNodeId.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
}

/**
 * Below `<base>/<object id>/`, each entity's topics are named by its component id: its state on
 * `<key>`, its commands on `<key>/set`, so that one subscription (`+/set`) takes every command.
 */
export class HaTopics {
  /** The device-based discovery config (retained). */
  readonly config: string;
  /** Home Assistant's birth and will. */
  readonly haStatus: string;
  /** The bridge's availability, shared by every camera of this `base` on this Node-RED. */
  readonly bridge: string;
  /** Below it, everything of this camera. */
  readonly root: string;
  /** The camera's availability, from its device health. */
  readonly camera: string;
  /** Every command of this camera. */
  readonly commands: string;

  constructor(
    readonly prefix: string,
    readonly base: string,
    readonly objectId: string,
  ) {
    this.config = `${prefix}/device/${objectId}/config`;
    this.haStatus = `${prefix}/status`;
    this.bridge = `${base}/bridge`;
    this.root = `${base}/${objectId}`;
    this.camera = `${this.root}/availability`;
    this.commands = `${this.root}/+/set`;
  }

  /** The state (or event, or picture) topic of a component. */
  state(key: string): string {
    return `${this.root}/${key}`;
  }

  /** The command topic of a component. */
  command(key: string): string {
    return `${this.root}/${key}/set`;
  }
}
