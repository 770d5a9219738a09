/**
 * `POST /ipcam-device/discover`: the device dialog's "Search network". Same permission as
 * editing the node; probes only when asked, one search at a time per runtime, for
 * DIALOG_SEARCH_MS, answers bounded as every search is (lib/discovery/probe.ts). The answer
 * never holds a credential: typed ones are used for the search and dropped.
 */
import { IpcamError } from '../lib/errors/errors';
import { search, type FoundDevice } from './discovery-search';
import type { AdminRequest, AdminResponse, NodeAPI } from './red';

/** How long the dialog's search listens: long enough for a LAN, short enough to wait for. */
export const DIALOG_SEARCH_MS = 3000;
/** The editor sends this instead of a password it has not changed. */
const UNCHANGED_PASSWORD = '__PWRD__';
const MAX_CREDENTIAL = 256;

type SearchAnswer = { ok: true; devices: FoundDevice[]; truncated: boolean } | { ok: false; error: { code: string; message: string } };

export function registerSearchEndpoint(RED: NodeAPI): void {
  let running = false;
  RED.httpAdmin.post('/ipcam-device/discover', RED.auth.needsPermission('ipcam-device.write'), (req: AdminRequest, res: AdminResponse) => {
    if (running) {
      res.status(429).json({ ok: false, error: { code: 'EINPUT', message: 'A network search is already running: try again in a few seconds' } });
      return;
    }
    running = true;
    void answer(RED, req.body)
      .then((body) => res.json(body))
      .finally(() => (running = false));
  });
}

async function answer(RED: NodeAPI, body: unknown): Promise<SearchAnswer> {
  const form = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  try {
    const result = await search(RED, { durationMs: DIALOG_SEARCH_MS, identify: true, credentials: typedCredentials(form) });
    return { ok: true, devices: result.devices, truncated: result.truncated };
  } catch (err) {
    const e = err instanceof IpcamError ? err : new IpcamError('ECONN', 'The search failed');
    return { ok: false, error: { code: e.code, message: e.message } };
  }
}

/**
 * Credentials typed in the dialog, for identifying devices that are not deployed. The stored
 * password (the placeholder) is not one: a deployed device is identified with its own.
 */
function typedCredentials(form: Record<string, unknown>): { username: string; password: string } | undefined {
  const { username, password } = form;
  if (typeof password !== 'string' || password === '' || password === UNCHANGED_PASSWORD || password.length > MAX_CREDENTIAL) return undefined;
  if (typeof username !== 'string' || username === '' || username.length > MAX_CREDENTIAL) return undefined;
  return { username, password };
}
