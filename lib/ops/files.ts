/**
 * Spec 4.12: file access (fileread, filewrite). The request builders here are the only ones for
 * these two CGIs: the server tests (servetest.ts) write their input files and read their logs
 * through them too.
 */
import { inputError } from '../errors/errors';
import { shape, text, withLabels } from '../input/params';
import { MAX_TARGET } from '../transport/client';
import { targetOf } from './runner';
import { defineOp, type CgiAnswer, type OpRequest, type Operation } from './types';

export const FILE_READ_PATH = '/cgi-bin/admin/fileread';
export const FILE_WRITE_PATH = '/cgi-bin/admin/filewrite';
/** Query keys of spec 4.12. */
export const READ_KEY = 'READ.filePath';
export const SAVE_PATH_KEY = 'SAVE.filePath';
export const SAVE_DATA_KEY = 'SAVE.fileData';

/** Longest file path (a Linux path component budget; the devices run Linux). */
export const FILE_PATH_MAX = 255;
/**
 * Most characters of data written. The data travels in the URL, so the real bound is the whole
 * request target after percent-encoding (`MAX_TARGET`): text of many encoded characters (spaces,
 * line breaks, non-ASCII) holds fewer.
 */
export const FILE_DATA_MAX = 4000;
/** Largest file read (bytes): a file read is for logs and small settings files. */
export const FILE_READ_MAX_BYTES = 1024 * 1024;
/** What the device answers for an empty (or missing) file (field notes). */
export const EMPTY_FILE_ANSWER = 'None';

/**
 * Absolute, and no `..` segment: a file path never climbs out of where it names. Control
 * characters are refused by the text rule itself.
 */
const ABSOLUTE_NO_DOTDOT = /^(?!.*(?:^|\/)\.\.(?:\/|$))\/.*$/;

/** A file path on the device, e.g. `/tmp/message.txt`. */
export const FILE_PATH = text({ max: FILE_PATH_MAX, pattern: ABSOLUTE_NO_DOTDOT, patternText: 'an absolute path like /tmp/note.txt, without .. segments' });
/** The text written to a file: several lines allowed, tab too, no other control character; may be empty. */
export const FILE_DATA = text({ max: FILE_DATA_MAX, min: 0, kind: 'multiline' });

/** EINPUT (nothing sent) when the request target would be longer than the device client sends. */
export function assertTargetFits(request: OpRequest, what: string): OpRequest {
  const length = targetOf(request).length;
  if (length > MAX_TARGET) {
    throw inputError(`${what} is too long once encoded for the URL: the request would be ${length} characters, at most ${MAX_TARGET} are sent (spaces, line breaks and non-ASCII characters take 3 to 12 each)`);
  }
  return request;
}

/** The fileread request of `path` (checked by `FILE_PATH`). */
export function fileReadRequest(path: string, secrets?: readonly string[]): OpRequest {
  // A file's text is data: a file whose first line starts with `Error` is read as it is.
  return { path: FILE_READ_PATH, query: [[READ_KEY, path]], what: 'file read', names: [READ_KEY], maxBytes: FILE_READ_MAX_BYTES, content: true, ...(secrets && { secrets }) };
}

/** The filewrite request of `data` to `path` (both checked); EINPUT when too long for the URL. */
export function fileWriteRequest(path: string, data: string, what = 'The data', secrets?: readonly string[]): OpRequest {
  const request: OpRequest = {
    path: FILE_WRITE_PATH,
    query: [
      [SAVE_PATH_KEY, path],
      [SAVE_DATA_KEY, data],
    ],
    what: 'file write',
    names: [SAVE_PATH_KEY, SAVE_DATA_KEY],
    ...(secrets && { secrets }),
  };
  return assertTargetFits(request, what);
}

/** A fileread answer as text: the device's `None` is an empty file. */
export function fileText(answer: CgiAnswer): string {
  return answer.text.trim() === EMPTY_FILE_ANSWER ? '' : answer.text;
}

export const readFile = defineOp({
  name: 'readFile',
  label: 'Read a file',
  api: 'cgi',
  access: 'admin',
  class: 'files',
  summary: 'Reads a text file of the device (an empty file gives empty text)',
  params: withLabels(shape({ path: FILE_PATH }), { path: 'File path' }),
  request: (p) => fileReadRequest(p.path),
  parse: (answer) => ({ payload: fileText(answer) }),
});

export const writeFile = defineOp({
  name: 'writeFile',
  label: 'Write a file',
  api: 'cgi',
  access: 'admin',
  class: 'destructive',
  summary: 'Writes text to a file of the device, replacing what it held',
  params: withLabels(shape({ path: FILE_PATH, data: FILE_DATA }), { path: 'File path', data: 'Text' }),
  request: (p) => fileWriteRequest(p.path, p.data),
  parse: () => ({ payload: { ok: true } }),
});

export const FILES_OPERATIONS: readonly Operation[] = [readFile, writeFile];
