/**
 * Spec 4.9: the server tests (servetest). `http` and `cifs`/`nfs` are one request each; `smtp` and
 * `ftp` are procedures: write the test's input files (filewrite), start the test, read its log
 * (fileread) until it ends. Field notes: servetest had command-injection bugs on these devices, so
 * beside the percent-encoding of every value, each value is held to what its place needs (host
 * names are host names; no name, user or path holds a shell character or starts a word with a
 * dash; no password holds a character that ends a word and runs something) and the password
 * parameters are secrets: they reach no message, log, error or result.
 */
import { deviceWords, withholdLines } from '../errors/echo';
import { IpcamError } from '../errors/errors';
import { bool, int, oneOf, optional, shape, text, withDefault, withLabels } from '../input/params';
import { assertTargetFits, fileReadRequest, fileText, fileWriteRequest } from './files';
import { defineOp, type CgiAnswer, type OpContext, type OpRequest, type OpResult, type Operation } from './types';

export const SERVETEST_PATH = '/cgi-bin/admin/servetest';

/** Spec 8: ports in servetest 1-65535. */
export const PORT_RANGE = { min: 1, max: 65535 } as const;
export const STORAGE_TYPES = ['cifs', 'nfs'] as const;
export const ON_OFF = ['on', 'off'] as const;

export const HOST_MAX = 253;
export const NAME_MAX = 64;
export const PASSWORD_MAX = 128;
export const EMAIL_MAX = 254;
export const SUBJECT_MAX = 200;
/** The mail text goes into a file by filewrite, in the URL: the encoded request bounds it further. */
export const MESSAGE_MAX = 2000;

// Every name, user and path below refuses the shell's characters and a word starting with a dash
// (lib/input/params `shell`); a password refuses the characters that end a word and run something.

/** A host name, IPv4 or IPv6 address (its pattern holds no shell character: only a leading dash is left to refuse). */
export const SERVER_HOST = text({ max: HOST_MAX, noOption: true, pattern: /^[A-Za-z0-9.:_-]+$/, patternText: 'a host name or IP address like 192.168.1.10 or mail.example.com' });
/** A network share: a host and a directory (`192.168.1.10/share`, `//nas/cam`; no backslash: a shell acts on it). */
export const STORAGE_SERVER = text({ max: HOST_MAX, shell: 'name', pattern: /^[A-Za-z0-9.:_\-/ ]+$/, patternText: 'a host and share like 192.168.1.10/share or //nas/cameras' });
export const USER_NAME = text({ max: NAME_MAX, shell: 'name' });
export const WORKGROUP = text({ max: NAME_MAX, shell: 'name', pattern: /^[A-Za-z0-9._ -]+$/, patternText: 'letters, digits, spaces, dots, dashes and underscores' });
/** Printable text without the shell's command characters: a password is sent percent-encoded and shown nowhere. */
export const PASSWORD = text({ max: PASSWORD_MAX, secret: true, shell: 'secret' });
export const PORT = int(PORT_RANGE);
export const EMAIL = text({ max: EMAIL_MAX, shell: 'name', pattern: /^[^\s@;|&$`<>'"\\(){}[\]]+@[A-Za-z0-9.:_-]+$/, patternText: 'a mail address like camera@example.com' });
export const SUBJECT = text({ max: SUBJECT_MAX });
export const MESSAGE = text({ max: MESSAGE_MAX, kind: 'multiline' });
/** The name the FTP test gives its file on the server: a plain name or a relative path. */
export const TARGET_NAME = text({ max: HOST_MAX, shell: 'name', pattern: /^(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9._\-/ ]+$/, patternText: 'a file name like ftptest.txt (letters, digits, . _ - / and spaces, no .. segments)' });
/** Seconds a test log is read for before the test is given up (and stopped). */
export const TEST_TIMEOUT = { min: 2, max: 300 } as const;
export const DEFAULT_TEST_TIMEOUT = 60;
/** Between two reads of a test log (ms). */
export const LOG_POLL_MS = 500;

/** Files of the procedures (spec 4.9). */
export const SMTP_SUBJECT_FILE = '/tmp/subject.txt';
export const SMTP_MESSAGE_FILE = '/tmp/message.txt';
export const SMTP_LOG_FILE = '/testsmtp.log';
export const FTP_SOURCE_FILE = '/var/ftptest';
export const FTP_LOG_FILE = '/testftp.log';
export const SMTP_SUCCESS = 'SMTP Test Success';
export const FTP_SUCCESS = 'FTP Test Success';
export const DEFAULT_SUBJECT = 'Camera SMTP test';
export const DEFAULT_MESSAGE = 'This is a test mail sent by the camera.';
export const DEFAULT_FTP_TARGET = 'ftptest.txt';
/** What the FTP test uploads (spec: any string). */
export const FTP_TEST_DATA = 'FTP test file of node-red-contrib-ipcam';
/** Largest answer of a one-request test (bytes). */
const TEST_ANSWER_MAX_BYTES = 64 * 1024;

/** Words of a failed, refused or stopped test. */
const FAILURE_WORDS = /\b(fail(ed|ure|s)?|error|abort(ed)?|cancel(l)?ed|refused|timed? ?out)\b/i;
/**
 * A log line that ends a test without success: it opens with an error word (`Error: cannot
 * connect`) or is the test's own verdict (`SMTP Test Failed`, `FTP test aborted`). A line that
 * merely holds such a word (a mail subject `Door failure`) is not one.
 */
const FAILURE_LINE = /^(error|fail(ed|ure)?)\b|\btest\b.*\b(fail(ed|ure|s)?|error|abort(ed)?|cancel(l)?ed|refused|timed? ?out)\b/i;

/** Every form of a password a device may echo: as given, percent-encoded, in base64 alone or in an AUTH PLAIN or Basic token. */
export function secretForms(password: string | undefined, user = ''): string[] {
  if (password === undefined || password === '') return [];
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return [password, encodeURIComponent(password), b64(password), b64(password).replace(/=+$/, ''), b64(`\0${user}\0${password}`), b64(`${user}\0${user}\0${password}`), b64(`${user}:${password}`)];
}

function secretsOf(...forms: string[][]): string[] {
  return forms.flat();
}

/**
 * What a test log must not show: the passwords given and the device's own, in every form. The
 * device's user name alone is no secret here (a log names the sender `admin@...` freely); error
 * lines are held to the client's stricter `secrets` by the runner.
 */
function logSecrets(ctx: OpContext, password: string | undefined, user: string | undefined): string[] {
  const device = ctx.client.options;
  return secretsOf(secretForms(password, user), secretForms(device.password, device.username));
}

/** The query of one test: pairs in the order of spec 4.9, left-out values not sent (the device then uses its own, spec rule 4). */
function query(pairs: Array<[string, string | number | undefined]>): Array<[string, string | number]> {
  return pairs.filter((pair): pair is [string, string | number] => pair[1] !== undefined);
}

function serveTestRequest(what: string, pairs: Array<[string, string | number | undefined]>, secrets: readonly string[]): OpRequest {
  const q = query(pairs);
  return assertTargetFits({ path: SERVETEST_PATH, query: q, what, names: q.map(([k]) => k), secrets, maxBytes: TEST_ANSWER_MAX_BYTES }, 'The test settings');
}

const onOff = (on: boolean): 'on' | 'off' => (on ? 'on' : 'off');

// ---------------------------------------------------------------------------------------------
// testHttpServer: servetest cmd=http answers the HTTP code the event server gave.

const httpParams = shape({
  server: SERVER_HOST,
  port: PORT,
  user: optional(USER_NAME),
  password: optional(PASSWORD),
  proxy: optional(SERVER_HOST),
  proxyPort: optional(PORT),
  proxyUser: optional(USER_NAME),
  proxyPassword: optional(PASSWORD),
});

/**
 * The answer's first line when it gives an HTTP code: `200`, `200 OK`, `HTTP/1.1 200 OK` or
 * `HTTP code: 200`. An address or port in a failure text (`Connection to 10.0.0.1:80 failed`) is
 * no code.
 */
const CODE_LINE = /^(?:HTTP\/\d(?:\.\d)?\s+|.*\bcode\s*[:=]?\s*)?([1-5]\d\d)(?:\s.*)?$/i;

/** The HTTP code the device reports, or undefined when its answer gives none. */
export function httpCodeOf(answerText: string): number | undefined {
  const first = answerText.slice(0, 1024).split('\n').find((line) => line.trim() !== '') ?? '';
  const match = CODE_LINE.exec(first.trim());
  return match ? Number(match[1]) : undefined;
}

export const testHttpServer = defineOp({
  name: 'testHttpServer',
  label: 'Test an HTTP server',
  api: 'cgi',
  access: 'admin',
  class: 'outbound',
  summary: 'Has the device connect to an HTTP (event) server, through a proxy if given, and tells the HTTP code it got',
  params: withLabels(httpParams, { server: 'Server', port: 'Port', user: 'User name', password: 'Password', proxy: 'Proxy', proxyPort: 'Proxy port', proxyUser: 'Proxy user', proxyPassword: 'Proxy password' }),
  request(p) {
    const secrets = secretsOf(secretForms(p.password, p.user), secretForms(p.proxyPassword, p.proxyUser));
    const proxySetting = (['proxyPort', 'proxyUser', 'proxyPassword'] as const).find((key) => p[key] !== undefined);
    if (proxySetting !== undefined && p.proxy === undefined) throw new IpcamError('EINPUT', `${proxySetting} needs proxy (the proxy address)`);
    return serveTestRequest('HTTP server test', [
      ['cmd', 'http'],
      ['ServerName', p.server],
      ['ServerPort', p.port],
      ['UserName', p.user],
      ['Password', p.password],
      ['ProxyAddr', p.proxy],
      ['ProxyPort', p.proxyPort],
      ['ProxyUser', p.proxyUser],
      ['ProxyPass', p.proxyPassword],
    ], secrets);
  },
  parse(answer, p) {
    const status = httpCodeOf(answer.text);
    if (status === undefined) {
      // The answer's secrets hold the request's (every form of both passwords) and the device's own credentials.
      const words = deviceWords(answer.text, answer.secrets);
      throw new IpcamError('EDEVICE', `The device got no HTTP answer from ${p.server}:${p.port}${words ? `: ${words}` : ''}`, { status: answer.status, ...(words !== undefined && { deviceDesc: words }) });
    }
    return { payload: { status } };
  },
});

// ---------------------------------------------------------------------------------------------
// testNetworkStorage: servetest fstype=cifs|nfs answers text whose first line says OK on success.

const storageParams = shape({
  type: oneOf(STORAGE_TYPES),
  server: STORAGE_SERVER,
  user: optional(USER_NAME),
  password: optional(PASSWORD),
  workgroup: optional(WORKGROUP),
});

/** The first line of a network storage test says it is OK (and not that it failed). */
export function storageTestOk(answerText: string): boolean {
  const first = answerText.split('\n').find((line) => line.trim() !== '') ?? '';
  return /\b(ok|success(ful)?|succeeded)\b/i.test(first) && !FAILURE_WORDS.test(first) && !/\bnot\b/i.test(first);
}

export const testNetworkStorage = defineOp({
  name: 'testNetworkStorage',
  label: 'Test network storage',
  api: 'cgi',
  access: 'admin',
  class: 'outbound',
  summary: 'Has the device mount a network share (CIFS or NFS) and tells whether it worked',
  params: withLabels(storageParams, { type: 'Share type', server: 'Share', user: 'User name', password: 'Password', workgroup: 'Workgroup' }),
  request: (p) =>
    serveTestRequest(`${p.type} storage test`, [
      ['fstype', p.type],
      ['ServerName', p.server],
      ['UserName', p.user],
      ['Password', p.password],
      ['Workgroup', p.workgroup],
    ], secretForms(p.password, p.user)),
  parse(answer, p) {
    const shown = withholdLines(answer.text, secretForms(p.password, p.user));
    return { payload: { ok: storageTestOk(answer.text), text: shown } };
  },
});

// ---------------------------------------------------------------------------------------------
// testSmtp / testFtp: procedures that read a log until it ends.

interface LogTest {
  /** `SMTP` or `FTP`, for texts. */
  kind: string;
  logFile: string;
  success: string;
  cancel: OpRequest;
  timeoutSeconds: number;
  secrets: readonly string[];
}

/** How a test log ends: with its success line, a failure line, or not yet. */
export function logVerdict(log: string, success: string): 'success' | 'failure' | undefined {
  const lines = log.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  const last = lines[lines.length - 1];
  if (last === undefined) return undefined;
  if (last.toLowerCase().includes(success.toLowerCase())) return 'success';
  return FAILURE_LINE.test(last) ? 'failure' : undefined;
}

/**
 * Reads the test's log every `LOG_POLL_MS` until it ends, at most `timeoutSeconds`; then stops
 * the test on the device (its cancel request) and gives up with ETIMEOUT.
 */
async function readLogUntilEnd(ctx: OpContext, test: LogTest): Promise<OpResult<{ ok: boolean; log: string }>> {
  const started = Date.now();
  const limitMs = test.timeoutSeconds * 1000;
  // Each read ends by the test's own end: a device dripping the log cannot stretch the loop.
  const end = started + limitMs;
  const read: OpRequest = { ...fileReadRequest(test.logFile, test.secrets), deadline: end };
  const maxReads = Math.ceil(limitMs / LOG_POLL_MS) + 1;
  for (let reads = 0; reads < maxReads; reads++) {
    if (reads > 0) await ctx.sleep(Math.max(0, Math.min(LOG_POLL_MS, end - Date.now())));
    let answer: CgiAnswer;
    try {
      answer = await ctx.cgi(read);
    } catch (err) {
      // Out of time: the test is stopped below, as when the log never ends.
      if (err instanceof IpcamError && err.code === 'ETIMEOUT' && Date.now() >= end) break;
      throw err;
    }
    const log = fileText(answer);
    const verdict = logVerdict(log, test.success);
    if (verdict !== undefined) return { payload: { ok: verdict === 'success', log: withholdLines(log, test.secrets) } };
    const elapsed = Date.now() - started;
    ctx.progress((elapsed / limitMs) * 100, `${test.kind.toLowerCase()} test`);
    if (elapsed >= limitMs) break;
  }
  // Best effort: the test is stopped so that it does not go on after we gave up on it.
  const stopped = await ctx.cgi(test.cancel).then(
    () => true,
    () => false,
  );
  throw new IpcamError(
    'ETIMEOUT',
    `The ${test.kind} test log did not end within ${test.timeoutSeconds} s${stopped ? '; the test was stopped' : ` and the test could not be stopped: run cancel${test.kind === 'SMTP' ? 'Smtp' : 'Ftp'}Test`}`,
  );
}

/** Sends the prepared requests in order (all were built, so checked, before the first one goes). */
async function sendAll(ctx: OpContext, requests: readonly OpRequest[]): Promise<CgiAnswer[]> {
  const answers: CgiAnswer[] = [];
  for (const request of requests) answers.push(await ctx.cgi(request));
  return answers;
}

const smtpParams = shape({
  server: SERVER_HOST,
  port: withDefault(PORT, 25),
  ssl: withDefault(bool(), false),
  user: optional(USER_NAME),
  password: optional(PASSWORD),
  to: EMAIL,
  from: EMAIL,
  subject: withDefault(SUBJECT, DEFAULT_SUBJECT),
  message: withDefault(MESSAGE, DEFAULT_MESSAGE),
  timeout: withDefault(int(TEST_TIMEOUT), DEFAULT_TEST_TIMEOUT),
});

export const cancelSmtpRequest = (): OpRequest => ({ path: SERVETEST_PATH, query: [['cmd', 'clearsmtp']], what: 'SMTP test cancel' });
export const cancelFtpRequest = (): OpRequest => ({ path: SERVETEST_PATH, query: [['cmd', 'clearftp']], what: 'FTP test cancel' });

export const testSmtp = defineOp({
  name: 'testSmtp',
  label: 'Test mail (SMTP)',
  api: 'cgi',
  access: 'admin',
  class: 'outbound',
  summary: 'Has the device send a test mail (writes /tmp/subject.txt and /tmp/message.txt, starts the test, reads /testsmtp.log until it ends)',
  params: withLabels(smtpParams, { server: 'Mail server', port: 'Port', ssl: 'SSL/TLS', user: 'User name', password: 'Password', to: 'To', from: 'From', subject: 'Subject', message: 'Message', timeout: 'Wait up to (s)' }),
  async run(ctx, p) {
    const secrets = secretForms(p.password, p.user);
    // Every request is built (and so checked) before the first one is sent.
    const requests = [
      fileWriteRequest(SMTP_SUBJECT_FILE, p.subject, 'The subject', secrets),
      fileWriteRequest(SMTP_MESSAGE_FILE, p.message, 'The message', secrets),
      serveTestRequest('SMTP test', [
        ['cmd', 'smtp'],
        ['ServerName', p.server],
        ['ServerPort', p.port],
        ['ServerSSL', onOff(p.ssl)],
        ['UserName', p.user],
        ['Password', p.password],
        ['RcptToAddr1', p.to],
        ['AdminAddr', p.from],
      ], secrets),
    ];
    await sendAll(ctx, requests);
    return readLogUntilEnd(ctx, { kind: 'SMTP', logFile: SMTP_LOG_FILE, success: SMTP_SUCCESS, cancel: cancelSmtpRequest(), timeoutSeconds: p.timeout, secrets: logSecrets(ctx, p.password, p.user) });
  },
});

export const cancelSmtpTest = defineOp({
  name: 'cancelSmtpTest',
  label: 'Stop the mail test',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Stops a running SMTP test',
  params: shape({}),
  request: cancelSmtpRequest,
  parse: () => ({ payload: { ok: true } }),
});

const ftpParams = shape({
  server: SERVER_HOST,
  user: optional(USER_NAME),
  password: optional(PASSWORD),
  passive: withDefault(bool(), true),
  target: withDefault(TARGET_NAME, DEFAULT_FTP_TARGET),
  timeout: withDefault(int(TEST_TIMEOUT), DEFAULT_TEST_TIMEOUT),
});

export const testFtp = defineOp({
  name: 'testFtp',
  label: 'Test FTP upload',
  api: 'cgi',
  access: 'admin',
  class: 'outbound',
  summary: 'Has the device upload a test file by FTP (writes /var/ftptest, starts the test, reads /testftp.log until it ends)',
  params: withLabels(ftpParams, { server: 'FTP server', user: 'User name', password: 'Password', passive: 'Passive mode', target: 'File name', timeout: 'Wait up to (s)' }),
  async run(ctx, p) {
    const secrets = secretForms(p.password, p.user);
    const requests = [
      fileWriteRequest(FTP_SOURCE_FILE, FTP_TEST_DATA, 'The FTP test file', secrets),
      serveTestRequest('FTP test', [
        ['cmd', 'ftp'],
        ['ServerName', p.server],
        ['UserName', p.user],
        ['Password', p.password],
        ['Passive', onOff(p.passive)],
        ['SourceName', FTP_SOURCE_FILE],
        ['TargetName', p.target],
      ], secrets),
    ];
    await sendAll(ctx, requests);
    return readLogUntilEnd(ctx, { kind: 'FTP', logFile: FTP_LOG_FILE, success: FTP_SUCCESS, cancel: cancelFtpRequest(), timeoutSeconds: p.timeout, secrets: logSecrets(ctx, p.password, p.user) });
  },
});

export const cancelFtpTest = defineOp({
  name: 'cancelFtpTest',
  label: 'Stop the FTP test',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: 'Stops a running FTP test',
  params: shape({}),
  request: cancelFtpRequest,
  parse: () => ({ payload: { ok: true } }),
});

export const SERVETEST_OPERATIONS: readonly Operation[] = [testHttpServer, testNetworkStorage, testSmtp, cancelSmtpTest, testFtp, cancelFtpTest];
