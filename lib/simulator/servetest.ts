import { request as httpRequest, type ClientRequest } from 'node:http';
import { FILE_PATH } from '../ops/files';
import {
  EMAIL,
  FTP_LOG_FILE,
  FTP_SUCCESS,
  ON_OFF,
  PASSWORD,
  PORT,
  SERVETEST_PATH,
  SERVER_HOST,
  SMTP_LOG_FILE,
  SMTP_MESSAGE_FILE,
  SMTP_SUBJECT_FILE,
  SMTP_SUCCESS,
  STORAGE_SERVER,
  STORAGE_TYPES,
  TARGET_NAME,
  USER_NAME,
  WORKGROUP,
} from '../ops/servetest';
import { oneOf, type Param } from '../input/params';
import type { Route, SimContext } from './context';
import { sendText } from './respond';

/** Hosts the simulated device really tries for an HTTP test; any other is offline unless listed in `httpServers`. */
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);
/** HTTP tests running at once; more are answered busy. */
const MAX_HTTP_TESTS = 4;
const HTTP_TEST_TIMEOUT_MS = 2000;

/** The rule of each servetest key, from the operation table's own parameter rules (spec 4.9). */
const KEY_RULES: Record<string, Param<unknown>> = {
  ServerPort: PORT,
  UserName: USER_NAME,
  Password: PASSWORD,
  ProxyAddr: SERVER_HOST,
  ProxyPort: PORT,
  ProxyUser: USER_NAME,
  ProxyPass: PASSWORD,
  Workgroup: WORKGROUP,
  ServerSSL: oneOf(ON_OFF),
  Passive: oneOf(ON_OFF),
  RcptToAddr1: EMAIL,
  AdminAddr: EMAIL,
  SourceName: FILE_PATH,
  TargetName: TARGET_NAME,
};

/** The keys each test takes, and those it needs. */
const TESTS: Record<string, { keys: readonly string[]; required: readonly string[] }> = {
  http: { keys: ['ServerName', 'ServerPort', 'UserName', 'Password', 'ProxyAddr', 'ProxyPort', 'ProxyUser', 'ProxyPass'], required: ['ServerName', 'ServerPort'] },
  storage: { keys: ['ServerName', 'UserName', 'Password', 'Workgroup'], required: ['ServerName'] },
  smtp: { keys: ['ServerName', 'ServerPort', 'ServerSSL', 'UserName', 'Password', 'RcptToAddr1', 'AdminAddr'], required: ['ServerName', 'ServerPort', 'RcptToAddr1', 'AdminAddr'] },
  ftp: { keys: ['ServerName', 'UserName', 'Password', 'Passive', 'SourceName', 'TargetName'], required: ['ServerName', 'SourceName', 'TargetName'] },
  clearsmtp: { keys: [], required: [] },
  clearftp: { keys: [], required: [] },
};

type LogKind = 'smtp' | 'ftp';

/**
 * The simulated device's server tests (servetest: http, cifs/nfs, smtp, ftp). Offline by design:
 * an HTTP test really connects only to this machine; SMTP and FTP tests write a believable log
 * into the device's files line by line, ending with the success line or a failure.
 */
export class SimulatedServeTests {
  /** Servers whose SMTP, FTP or storage test fails (connection refused). */
  readonly badServers = new Set<string>(['bad.example.com']);
  /** Remote HTTP servers the device reaches, by host, with the code they answer. */
  readonly httpServers = new Map<string, number>();
  /** A test whose log stops growing before its end line (a hung test). */
  hang = false;
  /** Firmware that echoes the passwords it was given into its answers and logs. */
  echoPasswords = false;
  /** Between two lines of a test log (ms). */
  stepMs = 40;
  private readonly runs = new Map<LogKind, NodeJS.Timeout>();
  private readonly httpTests = new Set<ClientRequest>();

  /** Whether an SMTP or FTP test is writing its log. */
  running(kind: LogKind): boolean {
    return this.runs.has(kind);
  }

  /** Stops every test (the simulator closes). */
  close(): void {
    for (const timer of this.runs.values()) clearInterval(timer);
    this.runs.clear();
    for (const req of this.httpTests) req.destroy();
    this.httpTests.clear();
  }

  readonly route: Route = async (ctx) => {
    if (ctx.path !== SERVETEST_PATH) return false;
    const fstype = value(ctx, 'fstype');
    const cmd = value(ctx, 'cmd');
    const test = fstype !== undefined ? 'storage' : cmd;
    if (fstype !== undefined && (cmd !== undefined || !(STORAGE_TYPES as readonly string[]).includes(fstype))) return error(ctx, 'fstype');
    const rule = test === undefined ? undefined : TESTS[test];
    if (test === undefined || rule === undefined) return error(ctx, 'cmd');
    const settings = new Map<string, string>();
    for (const [key, v] of ctx.query) {
      if (key === 'cmd' || key === 'fstype') continue;
      if (!rule.keys.includes(key) || settings.has(key)) return error(ctx, key);
      const check = key === 'ServerName' ? (test === 'storage' ? STORAGE_SERVER : SERVER_HOST) : KEY_RULES[key];
      if (!check || !valid(() => check.parse(v, key))) return error(ctx, key);
      settings.set(key, v);
    }
    const missing = rule.required.find((key) => !settings.has(key));
    if (missing !== undefined) return error(ctx, missing);
    const get = (key: string): string => settings.get(key) ?? '';

    switch (test) {
      case 'http':
        sendText(ctx.res, 200, await this.httpTest(get('ServerName'), Number(get('ServerPort')), get('Password')));
        return true;
      case 'storage':
        sendText(ctx.res, 200, this.storageTest(fstype ?? '', get('ServerName'), get('UserName'), get('Password')));
        return true;
      case 'smtp':
        this.start(ctx, 'smtp', this.smtpLog(ctx, settings));
        break;
      case 'ftp':
        this.start(ctx, 'ftp', this.ftpLog(ctx, settings));
        break;
      case 'clearsmtp':
      case 'clearftp':
        this.stop(ctx, test === 'clearsmtp' ? 'smtp' : 'ftp');
        break;
    }
    sendText(ctx.res, 200, 'OK\r\n');
    return true;
  };

  /** The HTTP code the server gave, or the device's words for no answer. */
  private async httpTest(host: string, port: number, password: string): Promise<string> {
    const failed = `Connection to ${host}:${port} failed${this.echoPasswords && password ? ` (password ${password})` : ''}\r\n`;
    if (!LOCAL_HOSTS.has(host)) {
      const code = this.httpServers.get(host);
      return code === undefined ? failed : `${code}\r\n`;
    }
    if (this.httpTests.size >= MAX_HTTP_TESTS) return '# Error: busy\r\n';
    const code = await new Promise<number | undefined>((resolve) => {
      const req = httpRequest({ host, port, path: '/', method: 'GET', agent: false, timeout: HTTP_TEST_TIMEOUT_MS }, (res) => {
        res.resume();
        resolve(res.statusCode);
        req.destroy();
      });
      this.httpTests.add(req);
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(undefined));
      req.on('close', () => {
        this.httpTests.delete(req);
        resolve(undefined);
      });
      req.end();
    });
    return code === undefined ? failed : `${code}\r\n`;
  }

  private storageTest(type: string, server: string, user: string, password: string): string {
    if (this.badServers.has(hostOf(server))) {
      // Leaky firmware answers with the mount command it ran, password and all.
      if (this.echoPasswords && password) return `# Error: mount -t ${type} -o username=${user},password=${password} ${server} failed\r\n`;
      return `Network storage test failed: mount error(113): could not connect to ${server}\r\n`;
    }
    const lines = ['Network storage test OK', `Mounted ${type} share ${server}${user ? ` as ${user}` : ''}`];
    if (this.echoPasswords && password) lines.push(`mount options: username=${user},password=${password}`);
    lines.push('Unmounted');
    return `${lines.join('\r\n')}\r\n`;
  }

  private smtpLog(ctx: SimContext, s: Map<string, string>): string[] {
    const server = s.get('ServerName') ?? '';
    const port = s.get('ServerPort') ?? '';
    const user = s.get('UserName') ?? '';
    const password = s.get('Password') ?? '';
    const lines = [`Connecting to ${server}:${port}${s.get('ServerSSL') === 'on' ? ' with SSL' : ''}`];
    if (this.badServers.has(server)) return [...lines, `Error: cannot connect to ${server}:${port} (Connection refused)`, 'SMTP Test Failed'];
    lines.push(`220 ${server} ESMTP ready`, 'EHLO ipcam-sim', '250 OK');
    if (user) {
      lines.push(`AUTH LOGIN as ${user}`);
      if (this.echoPasswords) lines.push(`AUTH PLAIN ${Buffer.from(`\0${user}\0${password}`).toString('base64')}`, `Password: ${password}`);
      lines.push('235 Authentication successful');
    }
    const subject = ctx.state.files.read(SMTP_SUBJECT_FILE) ?? '';
    const message = ctx.state.files.read(SMTP_MESSAGE_FILE) ?? '';
    lines.push(`MAIL FROM:<${s.get('AdminAddr') ?? ''}>`, `RCPT TO:<${s.get('RcptToAddr1') ?? ''}>`, `Subject: ${subject.split('\n')[0] ?? ''}`, `DATA ${Buffer.byteLength(message)} bytes`, '250 Message accepted', SMTP_SUCCESS);
    return lines;
  }

  private ftpLog(ctx: SimContext, s: Map<string, string>): string[] {
    const server = s.get('ServerName') ?? '';
    const user = s.get('UserName') || 'anonymous';
    const lines = [`Connecting to ${server}:21`];
    if (this.badServers.has(server)) return [...lines, `Error: cannot connect to ${server}:21 (Connection refused)`, 'FTP Test Failed'];
    lines.push('220 FTP server ready', `USER ${user}`);
    if (this.echoPasswords && s.get('Password')) lines.push(`PASS ${s.get('Password') ?? ''}`);
    lines.push('230 Login successful', s.get('Passive') === 'off' ? '200 PORT command successful' : '227 Entering Passive Mode');
    const source = ctx.state.files.read(s.get('SourceName') ?? '');
    if (source === undefined) return [...lines, `Error: cannot open ${s.get('SourceName') ?? ''}`, 'FTP Test Failed'];
    lines.push(`STOR ${s.get('TargetName') ?? ''} (${Buffer.byteLength(source)} bytes)`, '226 Transfer complete', FTP_SUCCESS);
    return lines;
  }

  /** Starts writing a test's log, one line a step (a new test replaces a running one, as the device does). */
  private start(ctx: SimContext, kind: LogKind, lines: string[]): void {
    const file = kind === 'smtp' ? SMTP_LOG_FILE : FTP_LOG_FILE;
    const files = ctx.state.files;
    this.halt(kind);
    files.write(file, '');
    // A hung test writes its first lines and then nothing more, never its end line.
    const shown = this.hang ? lines.slice(0, Math.max(1, lines.length - 3)) : lines;
    let next = 0;
    const timer = setInterval(() => {
      const line = shown[next++];
      if (line !== undefined) files.append(file, `${line}\n`);
      if (next < shown.length) return;
      clearInterval(timer);
      // A hung test stays running (until cleared) with nothing more to write.
      if (!this.hang) this.runs.delete(kind);
    }, this.stepMs);
    timer.unref();
    this.runs.set(kind, timer);
  }

  private stop(ctx: SimContext, kind: LogKind): void {
    if (!this.runs.has(kind)) return;
    this.halt(kind);
    ctx.state.files.append(kind === 'smtp' ? SMTP_LOG_FILE : FTP_LOG_FILE, `${kind.toUpperCase()} test aborted\n`);
  }

  private halt(kind: LogKind): void {
    const timer = this.runs.get(kind);
    if (timer) clearInterval(timer);
    this.runs.delete(kind);
  }
}

function value(ctx: SimContext, key: string): string | undefined {
  return ctx.query.find(([k]) => k === key)?.[1];
}

/** The host of a share (`//nas/share`, `nas:/export`, `192.168.1.10/share`). */
function hostOf(share: string): string {
  return share.replace(/^[/\\]+/, '').split(/[/\\:]/, 1)[0] ?? '';
}

function error(ctx: SimContext, key: string): true {
  sendText(ctx.res, 200, `# Error: Error setting '${key}'\r\n`);
  return true;
}

function valid(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}
