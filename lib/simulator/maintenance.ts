import { createHash } from 'node:crypto';
import { BACKUP_MAX_BYTES, FIRMWARE_MAX_BYTES, LANGUAGE_MAX_BYTES } from '../ops/maintenance';
import type { Route, SimContext } from './context';
import { queryValue } from './context';
import { filePart, parseFormData, type FormPart } from './form-data';
import { sendBuffer, sendText } from './respond';
import { readTar, writeTar } from './tar';

const PARAMS_FILE = 'config/params.conf';
const MAX_LANGUAGE_PACKS = 8;
/** What a soft factory reset keeps: the network settings, so that the device stays reachable. */
const KEPT_ON_RESET = /^Network\./;

export interface StoredUpload {
  field: string;
  filename: string;
  contentType: string | undefined;
  size: number;
  /** SHA-256 of the bytes (hex): what tests compare, without keeping a firmware image. */
  sha256: string;
}

/**
 * The simulated device's maintenance (spec 4.3): factory defaults, a backup archive built from
 * the parameters and restored from one, a firmware upgrade that progresses over `upgradeMs` and
 * then "reboots", reboot, language packs. Uploads are read as multipart/form-data by the
 * simulator's own parser and checked with the limits of lib/ops/maintenance.
 */
export class SimulatedMaintenance {
  /** The parameters as shipped: a factory reset returns to them (network settings kept). */
  private readonly factory: Map<string, string>;
  reboots = 0;
  factoryResets = 0;
  backups = 0;
  restores = 0;
  /** How long an upgrade takes from upload to 100% (ms). */
  upgradeMs = 3000;
  /** A device stuck at this percentage (tests of the bounded wait); undefined = progresses to 100. */
  stallAt: number | undefined;
  /** Upgrades finished (each ends with a reboot). */
  upgrades = 0;
  /** `action=preset` seen since the last upload. */
  prepared = false;
  private upgrade: { startedAt: number; resetSettings: boolean } | undefined;
  private lastProgress = 0;
  /** The last upload of each kind, as the device read it. */
  readonly uploads = new Map<'restore' | 'firmware' | 'language', StoredUpload>();
  /** Language packs by file name, newest last (at most MAX_LANGUAGE_PACKS). */
  readonly languagePacks = new Map<string, Buffer>();

  constructor(private readonly params: Map<string, string>) {
    this.factory = new Map(params);
  }

  readonly route: Route = (ctx) => {
    switch (ctx.path) {
      case '/cgi-bin/admin/restoredevconf':
        this.factoryReset();
        sendText(ctx.res, 200, 'OK\r\n');
        return true;
      case '/cgi-bin/admin/backup':
        this.backups += 1;
        ctx.res.setHeader('content-disposition', 'attachment; filename="backup.tar"');
        sendBuffer(ctx.res, 200, this.backup(), 'application/x-tar');
        return true;
      case '/cgi-bin/admin/restore':
        this.upload(ctx, 'restore', BACKUP_MAX_BYTES, (file) => this.restore(file.data));
        return true;
      case '/cgi-bin/admin/firmwareupgrade':
        this.firmware(ctx);
        return true;
      case '/cgi-bin/admin/reboot':
        this.reboots += 1;
        sendText(ctx.res, 200, 'OK\r\n');
        return true;
      case '/cgi-bin/admin/language':
        this.upload(ctx, 'language', LANGUAGE_MAX_BYTES, (file) => {
          this.languagePacks.delete(file.filename ?? '');
          this.languagePacks.set(file.filename ?? '', Buffer.from(file.data));
          for (const name of this.languagePacks.keys()) if (this.languagePacks.size > MAX_LANGUAGE_PACKS) this.languagePacks.delete(name);
          return undefined;
        });
        return true;
      default:
        return false;
    }
  };

  /** The upgrade's progress now; reaching 100 finishes it (settings reset when asked, then a reboot). */
  progress(now = Date.now()): number {
    if (!this.upgrade) return this.lastProgress;
    let percent = Math.min(100, Math.floor(((now - this.upgrade.startedAt) / this.upgradeMs) * 100));
    if (this.stallAt !== undefined) percent = Math.min(percent, this.stallAt);
    this.lastProgress = percent;
    if (percent >= 100) {
      if (this.upgrade.resetSettings) this.factoryReset();
      this.upgrade = undefined;
      this.upgrades += 1;
      this.reboots += 1;
    }
    return percent;
  }

  factoryReset(): void {
    const kept = [...this.params].filter(([name]) => KEPT_ON_RESET.test(name));
    this.params.clear();
    for (const [name, value] of this.factory) this.params.set(name, value);
    for (const [name, value] of kept) this.params.set(name, value);
    this.factoryResets += 1;
  }

  private backup(): Buffer {
    const lines = [...this.params].map(([name, value]) => `${name}=${value}\n`).join('');
    return writeTar([{ name: PARAMS_FILE, data: Buffer.from(lines, 'utf8') }]);
  }

  /** An error text when the archive is not a backup of this device, else applies it. */
  private restore(archive: Buffer): string | undefined {
    const file = readTar(archive)?.find((entry) => entry.name === PARAMS_FILE);
    if (!file) return 'Invalid backup file';
    const restored = new Map<string, string>();
    for (const line of file.data.toString('utf8').split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) restored.set(line.slice(0, eq), line.slice(eq + 1));
    }
    if (restored.size === 0) return 'Invalid backup file';
    this.params.clear();
    for (const [name, value] of restored) this.params.set(name, value);
    this.restores += 1;
    return undefined;
  }

  private firmware(ctx: SimContext): void {
    const action = queryValue(ctx, 'action');
    if (ctx.method === 'GET' && action === 'preset') {
      this.prepared = true;
      sendText(ctx.res, 200, 'OK\r\n');
    } else if (ctx.method === 'GET' && action === 'progress') {
      sendText(ctx.res, 200, `Progress=${this.progress()}%\r\n`);
    } else if (ctx.method === 'POST' && (action === undefined || action === 'default')) {
      if (this.upgrade) {
        sendText(ctx.res, 200, '# Error: An upgrade is already running\r\n');
        return;
      }
      if (!this.prepared) {
        sendText(ctx.res, 200, '# Error: Upgrade not prepared (action=preset)\r\n');
        return;
      }
      this.upload(ctx, 'firmware', FIRMWARE_MAX_BYTES, () => {
        this.prepared = false;
        this.lastProgress = 0;
        this.upgrade = { startedAt: Date.now(), resetSettings: action === 'default' };
        return undefined;
      });
    } else {
      sendText(ctx.res, 200, `# Error: Error setting 'action'\r\n`);
    }
  }

  /** Reads the form's file part (checked: multipart, a file, within `maxBytes`) and answers what `apply` says. */
  private upload(ctx: SimContext, kind: 'restore' | 'firmware' | 'language', maxBytes: number, apply: (file: FormPart) => string | undefined): void {
    if (ctx.method !== 'POST') {
      sendText(ctx.res, 405, 'Method Not Allowed');
      return;
    }
    const file = filePart(parseFormData(ctx.req.headers['content-type'], ctx.body));
    if (!file) {
      sendText(ctx.res, 200, '# Error: No file uploaded (multipart/form-data with a file part expected)\r\n');
      return;
    }
    if (file.data.length > maxBytes) {
      sendText(ctx.res, 200, `# Error: File too large (at most ${maxBytes} bytes)\r\n`);
      return;
    }
    this.uploads.set(kind, { field: file.name, filename: file.filename ?? '', contentType: file.contentType, size: file.data.length, sha256: createHash('sha256').update(file.data).digest('hex') });
    const error = apply(file);
    sendText(ctx.res, 200, error === undefined ? 'OK\r\n' : `# Error: ${error}\r\n`);
  }
}
