import { EMPTY_FILE_ANSWER, FILE_DATA, FILE_PATH, FILE_READ_PATH, FILE_WRITE_PATH, READ_KEY, SAVE_DATA_KEY, SAVE_PATH_KEY } from '../ops/files';
import type { Route } from './context';
import { queryValue } from './context';
import { sendText } from './respond';

/** Most files the simulated device holds, and most characters in one: the store stays bounded. */
export const MAX_SIM_FILES = 256;
export const MAX_SIM_FILE_CHARS = 256 * 1024;

/** The simulated device's files (fileread, filewrite); the server tests write their logs here too. */
export class SimulatedFiles {
  /** File contents by path. */
  readonly files = new Map<string, string>([['/etc/hostname', 'ipcam-sim\n']]);

  read(path: string): string | undefined {
    return this.files.get(path);
  }

  /** Writes (replaces) a file; false when the store is full or the text too long, as a full flash would. */
  write(path: string, data: string): boolean {
    if (data.length > MAX_SIM_FILE_CHARS) return false;
    if (!this.files.has(path) && this.files.size >= MAX_SIM_FILES) return false;
    this.files.set(path, data);
    return true;
  }

  /** Adds to a file (a test log growing line by line), within the same bounds. */
  append(path: string, text: string): boolean {
    return this.write(path, (this.files.get(path) ?? '') + text);
  }

  readonly route: Route = (ctx) => {
    if (ctx.path === FILE_READ_PATH) {
      const path = validPath(queryValue(ctx, READ_KEY));
      if (path === undefined) {
        sendText(ctx.res, 404, 'Not Found');
        return true;
      }
      const content = this.read(path);
      // Field notes: an empty file (and, here, a missing one) reads as `None`.
      sendText(ctx.res, 200, content === undefined || content === '' ? `${EMPTY_FILE_ANSWER}\n` : content);
      return true;
    }
    if (ctx.path !== FILE_WRITE_PATH) return false;
    const path = validPath(queryValue(ctx, SAVE_PATH_KEY));
    if (path === undefined) {
      sendText(ctx.res, 404, 'Not Found');
      return true;
    }
    const data = queryValue(ctx, SAVE_DATA_KEY);
    if (data === undefined || !valid(() => FILE_DATA.parse(data, SAVE_DATA_KEY))) {
      sendText(ctx.res, 200, `# Error: Error setting '${SAVE_DATA_KEY}'\r\n`);
      return true;
    }
    sendText(ctx.res, 200, this.write(path, data) ? 'OK\r\n' : '# Error: No space left on device\r\n');
    return true;
  };
}

/** The path when it is one the device takes (spec 7: an invalid file name is 404). */
function validPath(path: string | undefined): string | undefined {
  return path !== undefined && valid(() => FILE_PATH.parse(path, 'path')) ? path : undefined;
}

function valid(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}
