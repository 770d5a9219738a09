/**
 * Spec 4.8, audio and RTSP: audio sent to the device's speaker (POST /audio_in) and the RTSP
 * description of its stream (DESCRIBE, answered with Digest, or Basic where the device node
 * allows it in clear: see `rtspAuthMode`).
 */
import { addAbortSignal, Readable } from 'node:stream';
import { parseKeyValues } from '../cgi/codec';
import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { buffer, int, oneOf, optional, shape, text, withDefault, withLabels, type Param } from '../input/params';
import { parseSdp, type SdpMedia } from '../transport/sdp';
import { rtspDescribe } from '../transport/rtsp';
import { defineOp, type Operation } from './types';

const AUDIO_IN = '/audio_in';

/**
 * Audio the devices take on /audio_in (spec: a singlepart or multipart audio stream; the
 * encodings these devices decode): G.711 mu-law (`audio/basic`, the default) and a-law, G.726,
 * linear PCM, WAV and AAC.
 */
export const AUDIO_CONTENT_TYPES = ['audio/basic', 'audio/PCMU', 'audio/PCMA', 'audio/G726-32', 'audio/L16', 'audio/wav', 'audio/x-wav', 'audio/aac'] as const;
/** One clip, bounded: about 35 minutes of G.711 (8000 bytes a second). */
export const AUDIO_MAX_BYTES = 16 * 1024 * 1024;
/** How long a readable stream may take to give its whole clip before it is refused (nothing sent). */
export const AUDIO_READ_TIMEOUT_MS = 120_000;
const AUDIO_TIMEOUT_MS = 120_000;

/** A Buffer of at most AUDIO_MAX_BYTES, or a readable stream read (bounded) before sending. */
function audioInput(): Param<Buffer | Readable> {
  const bytes = buffer({ maxBytes: AUDIO_MAX_BYTES });
  return {
    limits: bytes.limits,
    parse: (value, field) => (value instanceof Readable ? value : bytes.parse(value, field)),
  };
}

/** The whole of `stream`, at most `max` bytes in `ms`; EINPUT (nothing sent) otherwise. */
async function readClip(stream: Readable, max: number, ms: number, signal: AbortSignal | undefined): Promise<Buffer> {
  // One controller for both ends of the wait (the caller's stop, our time limit); both released after.
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, ms);
  const onStop = (): void => stop.abort();
  if (signal?.aborted) stop.abort();
  else signal?.addEventListener('abort', onStop, { once: true });
  addAbortSignal(stop.signal, stream);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      if (!(chunk instanceof Uint8Array) && typeof chunk !== 'string') throw inputError(`audio must be a stream of bytes, got ${echo(chunk)}`);
      const piece = Buffer.from(chunk);
      size += piece.length;
      if (size > max) throw inputError(`audio must be at most ${max} bytes: the stream gave more, and nothing was sent`);
      chunks.push(piece);
    }
  } catch (err) {
    stream.destroy();
    if (err instanceof IpcamError) throw err;
    if (signal?.aborted) throw new IpcamError('ECONN', 'The operation was stopped before the audio was sent');
    if (timedOut) throw inputError(`The audio stream did not end within ${ms / 1000} s: nothing was sent`);
    throw inputError('The audio stream failed while it was read: nothing was sent');
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onStop);
  }
  if (size === 0) throw inputError('audio is empty');
  return Buffer.concat(chunks, size);
}

export const sendAudio = defineOp({
  name: 'sendAudio',
  label: 'Play audio',
  api: 'cgi',
  access: 'admin',
  class: 'change',
  summary: "Plays audio on the device's speaker (a Buffer or a readable stream, in one of the listed encodings)",
  params: withLabels(shape({ audio: audioInput(), contentType: withDefault(oneOf(AUDIO_CONTENT_TYPES), 'audio/basic') }), { audio: 'Audio', contentType: 'Encoding' }),
  async run(ctx, p) {
    const audio = p.audio instanceof Readable ? await readClip(p.audio, AUDIO_MAX_BYTES, AUDIO_READ_TIMEOUT_MS, ctx.signal) : p.audio;
    await ctx.cgi({ method: 'POST', path: AUDIO_IN, body: { data: audio, contentType: p.contentType }, timeout: AUDIO_TIMEOUT_MS, what: 'audio' });
    return { payload: { ok: true as const, bytes: audio.length } };
  },
});

/** The device parameters that name the RTSP port and stream (the spec: "taken from a device parameter"). */
export const RTSP_PARAM_GROUP = 'Network.RTSP';
export const RTSP_PORT_PARAM = 'Network.RTSP.Port';
export const RTSP_STREAM_PARAM = 'Network.RTSP.StreamName';
export const RTSP_DEFAULT_PORT = 554;
export const RTSP_PORT = { min: 1, max: 65535 } as const;
/** A stream name: a URL path (and query) of RFC 3986 characters, no leading `/`, nothing to encode. */
export const RTSP_STREAM_PATTERN = /^[A-Za-z0-9._~!$&'()*+,;=:@-][A-Za-z0-9._~!$&'()*+,;=:@/?-]*$/;
export const RTSP_STREAM_MAX = 128;

const streamName = text({ max: RTSP_STREAM_MAX, pattern: RTSP_STREAM_PATTERN, patternText: 'a stream path like live.sdp or media/video1 (no leading /, no spaces or %)' });
const rtspPort = int(RTSP_PORT);

export interface RtspDescription {
  url: string;
  sdp: string;
  media: SdpMedia[];
}

/**
 * The stream's description from the device's own RTSP server: its host is the device node's,
 * its port the device's `Network.RTSP.Port` (554 when unset), always read from the device and
 * never taken from a message, since the credentials go with the request. There is no `port`
 * parameter: a message naming one is EINPUT, nothing sent.
 */
const DESCRIBE_SHAPE = shape({ stream: optional(streamName) });
const describeParams: Param<{ stream?: string | undefined }> = {
  limits: DESCRIBE_SHAPE.limits,
  parse(value, field) {
    // Told in so many words: an RTSP port from a message was taken before, and is refused now.
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, 'port')) {
      throw inputError(`describeRtsp takes no port: it asks the device's own RTSP port (${RTSP_PORT_PARAM}), as the credentials go with the request; nothing was sent`);
    }
    return DESCRIBE_SHAPE.parse(value, field);
  },
};

export const describeRtsp = defineOp({
  name: 'describeRtsp',
  label: 'Describe an RTSP stream',
  api: 'rtsp',
  access: 'view',
  class: 'read',
  summary: "Asks the device's own RTSP server (its host, the port its parameters name; Digest only when the device node is https) to describe a stream (SDP: its video and audio)",
  params: withLabels(describeParams, { stream: 'Stream' }),
  async run(ctx, p) {
    const answer = await ctx.cgi({ path: '/cgi-bin/view/param', query: { action: 'list', group: RTSP_PARAM_GROUP }, what: 'RTSP parameter list' });
    const values = parseKeyValues(answer.text.length > 65_536 ? answer.text.slice(0, 65_536) : answer.text);
    const port = fromDevice(values.get(RTSP_PORT_PARAM), RTSP_PORT_PARAM, rtspPort) ?? RTSP_DEFAULT_PORT;
    const stream = p.stream ?? fromDevice(values.get(RTSP_STREAM_PARAM), RTSP_STREAM_PARAM, streamName);
    if (stream === undefined) throw new IpcamError('EDEVICE', `The device names no RTSP stream (${RTSP_STREAM_PARAM} is not set): give stream`);
    const { options } = ctx.client;
    const { url, answer: described } = await rtspDescribe({
      host: options.host,
      port,
      stream,
      device: { protocol: options.protocol, auth: options.auth },
      username: options.username,
      password: options.password,
      timeout: options.timeout,
      signal: ctx.signal,
    });
    if (described.status !== 200) throw new IpcamError('EHTTP', `The device answered RTSP ${described.status} to DESCRIBE ${url}`, { status: described.status });
    const sdp = described.body.toString('utf8');
    return { payload: { url, sdp, media: parseSdp(sdp) } satisfies RtspDescription };
  },
});

/** A value the device gave, checked by the same rule as ours: a bad one is EDEVICE (nothing of it is sent). */
function fromDevice<T>(value: string | undefined, name: string, param: Param<T>): T | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  try {
    return param.parse(value.trim(), name);
  } catch {
    throw new IpcamError('EDEVICE', `The device's ${name} is not a usable value${name === RTSP_STREAM_PARAM ? ': give stream' : ''}`);
  }
}

export const MEDIA_OPERATIONS: readonly Operation[] = [sendAudio, describeRtsp];
