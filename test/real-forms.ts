/**
 * Device posts in the forms real devices send them (shared/spec/field-notes.md, the captures),
 * written here from those sources and never from the simulator, and a client that posts them as
 * a camera does: one kept-alive connection, one post after the other.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { CAPTURES } from './helpers';

export function capture(name: string): string {
  return readFileSync(resolve(CAPTURES, name), 'utf8');
}

/** Field notes: cameras post `application/xml; charset=utf-8`, recorders `application/soap+xml`. */
export const CAMERA_CONTENT_TYPE = 'application/xml; charset=utf-8';
export const RECORDER_CONTENT_TYPE = 'application/soap+xml';

/** Field notes: a recorder firmware bug; the vendor says to use the time the post was received. */
export const TWENTY_DIGIT_TIME = '18445822972087551616';

/** The captured recorder plate (JP116D) with another `currentTime`. */
export function recorderPlateWithTime(currentTime: string): string {
  const doc = capture('nvr-v2/vehicle-lpr.xml');
  const out = doc.replace(/<currentTime>\d+<\/currentTime>/, `<currentTime>${currentTime}</currentTime>`);
  assert.ok(out.includes(`<currentTime>${currentTime}</currentTime>`));
  return out;
}

/**
 * The captured recorder plate filed in a group as recorders do (field notes:
 * `licensePlateListInfo/item/licensePlateMatchInfo/groupName`, `carOwner`), without
 * `vehicleListType`, and with another plate number.
 */
export function recorderPlateInGroup(plate: string, group: string, owner?: string): string {
  const doc = capture('nvr-v2/vehicle-lpr.xml');
  assert.doesNotMatch(doc, /vehicleListType/);
  const match = `<licensePlateMatchInfo><groupName><![CDATA[${group}]]></groupName>${owner === undefined ? '' : `<carOwner><![CDATA[${owner}]]></carOwner>`}</licensePlateMatchInfo>`;
  const out = doc.replace('<![CDATA[JP116D]]>', `<![CDATA[${plate}]]>`).replace('</licensePlateAttribute>', `</licensePlateAttribute>\n            ${match}`);
  assert.ok(out.includes(match) && out.includes(plate));
  return out;
}

/** The captured camera plate (ABC1234, whiteList) with `vehicleDirect` as a newer camera adds it. */
export function cameraPlateWithDirection(direction: string): string {
  const doc = capture('ipc-v1x/lpr.xml');
  return doc.replace('<vehicleListType type="string">whiteList</vehicleListType>', `<vehicleListType type="string">whiteList</vehicleListType>\n            <vehicleDirect type="string">${direction}</vehicleDirect>`);
}

/** Field notes: `<traject type="list"`, no `smartType`, no `messageType`; 0-10000 coordinates. */
export function trackingPost(n: number): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<config version="1.7" xmlns="http://www.ipc.com/ver10">\n' +
    `    <currentTime type="tint64">${1732045234584193 + n * 100000}</currentTime>\n` +
    '    <traject type="list" count="1">\n        <item>\n' +
    `            <targetId type="uint32">${40 + (n % 3)}</targetId>\n` +
    `            <rect><X1 type="uint32">${1000 + n * 50}</X1><Y1 type="uint32">4000</Y1><X2 type="uint32">${1900 + n * 50}</X2><Y2 type="uint32">6000</Y2></rect>\n` +
    '        </item>\n    </traject>\n</config>\n'
  );
}

export interface RawPost {
  body: string;
  contentType?: string;
}

export interface RawAnswer {
  status: number;
  body: string;
}

/**
 * Posts one after the other on a single kept-alive connection, as a camera does (path-only
 * request line, each post sent once the last was answered), and gives every answer. Fails if the
 * server closes the connection before the last answer.
 */
export async function postOnOneConnection(port: number, posts: RawPost[], path = '/'): Promise<RawAnswer[]> {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await once(socket, 'connect');
  let buffer = Buffer.alloc(0);
  let closed = false;
  let wake: () => void = () => undefined;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake();
  });
  socket.on('close', () => {
    closed = true;
    wake();
  });
  socket.on('error', () => undefined);
  const answer = async (): Promise<RawAnswer> => {
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = buffer.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? '0');
        if (buffer.length >= end + 4 + length) {
          const status = Number(head.split(' ')[1]);
          const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
          buffer = buffer.subarray(end + 4 + length);
          return { status, body };
        }
      }
      if (closed) throw new Error(`the server closed the connection after ${answers.length} answers`);
      await new Promise<void>((ready) => (wake = ready));
    }
  };
  const answers: RawAnswer[] = [];
  try {
    for (const post of posts) {
      const body = Buffer.from(post.body, 'utf8');
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${post.contentType ?? CAMERA_CONTENT_TYPE}\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n`;
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
      answers.push(await answer());
    }
  } finally {
    socket.destroy();
  }
  return answers;
}

/** One empty keep-alive, 20 tracking posts, a recorder plate with a 20-digit time, a normal camera plate: 23 posts. */
export function mixedConnection(): RawPost[] {
  return [
    { body: '' },
    ...Array.from({ length: 20 }, (_, i) => ({ body: trackingPost(i) })),
    { body: recorderPlateWithTime(TWENTY_DIGIT_TIME), contentType: RECORDER_CONTENT_TYPE },
    { body: capture('ipc-v1x/lpr.xml') },
  ];
}
