/**
 * Spec 4.3, maintenance (admin access, all): factory defaults (restoredevconf), backup and restore,
 * firmware upgrade (preset, upload, progress), reboot, language packs. Uploads are
 * multipart/form-data (RFC 7578; the spec's RFC 1867 form), framed by the transport around the
 * file's own Buffer and streamed.
 */
import { handedOnType } from '../safety/content-type';
import { IpcamError } from '../errors/errors';
import { bool, buffer, shape, withDefault, withLabels } from '../input/params';
import { defineOp, type CgiAnswer, type OpContext, type Operation, type OpRequest } from './types';

const RESTOREDEVCONF = '/cgi-bin/admin/restoredevconf';
const BACKUP = '/cgi-bin/admin/backup';
const RESTORE = '/cgi-bin/admin/restore';
const FIRMWARE_UPGRADE = '/cgi-bin/admin/firmwareupgrade';
const REBOOT = '/cgi-bin/admin/reboot';
const LANGUAGE = '/cgi-bin/admin/language';

/** Spec 8 gives no upload limits: firmware images of these devices run to tens of MiB; this is well above. */
export const FIRMWARE_MAX_BYTES = 256 * 1024 * 1024;
/** A configuration backup is a small archive of parameters (the largest answer a backup may be, too). */
export const BACKUP_MAX_BYTES = 16 * 1024 * 1024;
export const LANGUAGE_MAX_BYTES = 16 * 1024 * 1024;
/** The name of the form field that carries the file (the spec names none; `file` is what the devices' pages post). */
export const UPLOAD_FIELD = 'file';
/** File names sent in the form part: what the device's own page would send. */
export const UPLOAD_FILENAMES = { restore: 'backup.tar', firmware: 'firmware.bin', language: 'language.pack' } as const;
/** What a backup is called when the device's Content-Disposition names none (spec: an attachment named backup). */
export const BACKUP_FILENAME = 'backup.tar';
const BACKUP_CONTENT_TYPE = 'application/x-tar';
/** An upload and the device's work on it (flashing before it answers) take longer than a plain request. */
export const UPLOAD_TIMEOUT_MS = 120_000;
export const FIRMWARE_UPLOAD_TIMEOUT_MS = 600_000;

/**
 * How the firmware progress is polled: every `intervalMs`, at most `maxPolls` times and `maxMs`
 * in all, tolerating `maxFailures` failed polls in a row (the device is busy flashing). Bounded
 * by design; tests shorten it.
 */
export const FIRMWARE_POLLING = { intervalMs: 1000, maxPolls: 900, maxMs: 15 * 60_000, maxFailures: 10 };

/** `Progress=NN%` (field notes), the number 0-100. */
const PROGRESS_LINE = /^\s*progress\s*=\s*(\d{1,3})\s*%?\s*$/im;

/** The percentage a `firmwareupgrade?action=progress` answer holds; EPARSE when it holds none. */
export function parseProgress(text: string): number {
  const match = PROGRESS_LINE.exec(text.length > 1024 ? text.slice(0, 1024) : text);
  const value = match ? Number(match[1]) : NaN;
  if (!(value >= 0 && value <= 100)) throw new IpcamError('EPARSE', 'The firmware progress answer holds no Progress=NN% line');
  return value;
}

/**
 * What an upload sends first on a client that has not met the device yet: a parameter read, in
 * the admin space the uploads are in, without side effects and with a tiny answer. Its 401 tells
 * the scheme, so that the file goes once. Not `Expect: 100-continue` (undici sends it on HTTP/2
 * only, and these devices' small HTTP/1.0 servers are not known to honour it), and not a HEAD of
 * the upload's own CGI (such servers run a CGI on HEAD as on GET: a restore or upgrade without a file).
 */
export const UPLOAD_PROBE: OpRequest = { path: '/cgi-bin/admin/param', query: { action: 'list', group: 'Brand.ProdNbr' } };

/** The file as the one part of a form, as the device's own upload page sends it. */
function upload(path: string, file: Buffer, filename: string, what: string, extra: Partial<OpRequest> = {}): OpRequest {
  return {
    method: 'POST',
    path,
    body: { file: { field: UPLOAD_FIELD, filename, data: file, contentType: 'application/octet-stream' } },
    probe: UPLOAD_PROBE,
    timeout: UPLOAD_TIMEOUT_MS,
    what,
    ...extra,
  };
}

const ok = (): { payload: { ok: true } } => ({ payload: { ok: true } });

export const factoryReset = defineOp({
  name: 'factoryReset',
  label: 'Factory reset',
  api: 'cgi',
  access: 'admin',
  class: 'destructive',
  summary: 'Returns every parameter to its factory default',
  params: shape({}),
  request: () => ({ path: RESTOREDEVCONF, what: 'factory reset' }),
  parse: ok,
});

const FILENAME_PARAM = /(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.){1,256})"|([^;\s"]{1,256}))/i;
const FILENAME_STAR = /(?:^|;)\s*filename\*\s*=\s*utf-8''([^;\s]{1,768})/i;

/**
 * The file name a Content-Disposition gives, reduced to a plain name: no folder, no control
 * character, at most 128 characters; undefined when none is usable.
 */
export function attachmentName(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > 2048) return undefined;
  let name: string | undefined;
  const star = FILENAME_STAR.exec(value);
  if (star) {
    try {
      name = decodeURIComponent(star[1] as string);
    } catch {
      name = undefined;
    }
  }
  if (name === undefined) {
    const plain = FILENAME_PARAM.exec(value);
    name = plain ? (plain[1]?.replace(/\\(.)/g, '$1') ?? plain[2]) : undefined;
  }
  // eslint-disable-next-line no-control-regex -- a name with control characters is not used
  const base = name?.split(/[/\\]/).pop()?.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  if (base === undefined || base === '' || base === '.' || base === '..') return undefined;
  return base.slice(0, 128);
}

export const backup = defineOp({
  name: 'backup',
  label: 'Back up the configuration',
  api: 'cgi',
  access: 'admin',
  class: 'files',
  summary: 'Downloads the device configuration as an archive (a Buffer; msg.filename, msg.contentType)',
  params: shape({}),
  request: () => ({ path: BACKUP, maxBytes: BACKUP_MAX_BYTES, timeout: UPLOAD_TIMEOUT_MS, what: 'backup' }),
  parse(answer: CgiAnswer) {
    if (answer.body.length === 0) throw new IpcamError('EPARSE', 'The device answered the backup with an empty body');
    // No type: the tar it is; a type the device names passes only from the allow list.
    const contentType = answer.contentType.trim() === '' ? BACKUP_CONTENT_TYPE : handedOnType(answer.contentType);
    return { payload: answer.body, filename: attachmentName(answer.headers['content-disposition']) ?? BACKUP_FILENAME, contentType };
  },
});

export const restore = defineOp({
  name: 'restore',
  label: 'Restore a backup',
  api: 'cgi',
  access: 'admin',
  class: 'destructive',
  summary: 'Restores a configuration backup (file: a Buffer made by backup)',
  params: withLabels(shape({ file: buffer({ maxBytes: BACKUP_MAX_BYTES }) }), { file: 'Backup file' }),
  request: (p) => upload(RESTORE, p.file, UPLOAD_FILENAMES.restore, 'restore'),
  parse: ok,
});

/** Reports each whole percent once, never going back (an authentication retry sends the body again). */
function progressReporter(ctx: OpContext, stage: string): (percent: number) => void {
  let last = -1;
  return (percent) => {
    const whole = Math.floor(Math.max(0, Math.min(100, percent)));
    if (whole <= last) return;
    last = whole;
    ctx.progress(whole, stage);
  };
}

/** A failed poll the device may recover from (busy flashing, restarting its web server). */
function transient(err: unknown): boolean {
  return err instanceof IpcamError && (err.code === 'ECONN' || err.code === 'ETIMEOUT' || (err.code === 'EHTTP' && (err.status ?? 0) >= 500));
}

/** Polls `action=progress` until 100%, reporting each step; bounded by FIRMWARE_POLLING. */
async function waitForFirmware(ctx: OpContext): Promise<void> {
  const { intervalMs, maxPolls, maxMs, maxFailures } = FIRMWARE_POLLING;
  const report = progressReporter(ctx, 'device');
  const started = Date.now();
  // Each poll ends by the loop's own end: a device dripping its answer cannot stretch the loop.
  const end = started + maxMs;
  let failures = 0;
  let last: number | undefined;
  for (let poll = 1; poll <= maxPolls && Date.now() < end; poll++) {
    try {
      const answer = await ctx.cgi({ path: FIRMWARE_UPGRADE, query: { action: 'progress' }, what: 'firmware progress', deadline: end });
      failures = 0;
      last = parseProgress(answer.text);
      report(last);
      if (last >= 100) return;
    } catch (err) {
      if (!transient(err) || ++failures > maxFailures) throw err;
    }
    await ctx.sleep(Math.max(0, Math.min(intervalMs, end - Date.now())));
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  throw new IpcamError('ETIMEOUT', `The firmware upgrade did not reach 100% in ${seconds} s (${last === undefined ? 'no progress read' : `last ${last}%`}); check the device before trying again`);
}

export const upgradeFirmware = defineOp({
  name: 'upgradeFirmware',
  label: 'Upgrade the firmware',
  api: 'cgi',
  access: 'admin',
  class: 'destructive',
  summary: 'Uploads and installs a firmware image, reporting upload then device progress (resetSettings: factory defaults too)',
  params: withLabels(shape({ file: buffer({ maxBytes: FIRMWARE_MAX_BYTES }), resetSettings: withDefault(bool(), false) }), { file: 'Firmware file', resetSettings: 'Reset settings' }),
  async run(ctx, p) {
    await ctx.cgi({ path: FIRMWARE_UPGRADE, query: { action: 'preset' }, what: 'firmware upgrade preparation' });
    const uploaded = progressReporter(ctx, 'upload');
    uploaded(0);
    await ctx.cgi(
      upload(FIRMWARE_UPGRADE, p.file, UPLOAD_FILENAMES.firmware, 'firmware upload', {
        ...(p.resetSettings && { query: { action: 'default' } }),
        timeout: FIRMWARE_UPLOAD_TIMEOUT_MS,
        onUpload: (sent, total) => uploaded((sent / total) * 100),
      }),
    );
    uploaded(100);
    await waitForFirmware(ctx);
    return { payload: { ok: true as const, progress: 100 } };
  },
});

export const firmwareProgress = defineOp({
  name: 'firmwareProgress',
  label: 'Firmware upgrade progress',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Reads how far a firmware upgrade has come (0-100)',
  params: shape({}),
  request: () => ({ path: FIRMWARE_UPGRADE, query: { action: 'progress' }, what: 'firmware progress' }),
  parse: (answer) => ({ payload: { progress: parseProgress(answer.text) } }),
});

export const reboot = defineOp({
  name: 'reboot',
  label: 'Reboot',
  api: 'cgi',
  access: 'admin',
  class: 'destructive',
  summary: 'Restarts the device',
  params: shape({}),
  request: () => ({ path: REBOOT, what: 'reboot' }),
  parse: ok,
});

export const uploadLanguage = defineOp({
  name: 'uploadLanguage',
  label: 'Upload a language pack',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Uploads a language pack for the web interface (file: a Buffer)',
  params: withLabels(shape({ file: buffer({ maxBytes: LANGUAGE_MAX_BYTES }) }), { file: 'Language pack' }),
  request: (p) => upload(LANGUAGE, p.file, UPLOAD_FILENAMES.language, 'language upload'),
  parse: ok,
});

export const MAINTENANCE_OPERATIONS: readonly Operation[] = [factoryReset, backup, restore, upgradeFirmware, firmwareProgress, reboot, uploadLanguage];
