/**
 * The media sections of an SDP description (RFC 8866) as an RTSP DESCRIBE answers it: each
 * `m=` line with its codec (from `a=rtpmap`, or the static payload types of RFC 3551) and its
 * `a=control`. Bounded: at most MAX_SDP_MEDIA sections and MAX_SDP_LINES lines are read.
 */
import { IpcamError } from '../errors/errors';

export interface SdpMedia {
  /** `video`, `audio`, `application`, ... */
  type: string;
  /** Encoding name as the description writes it, e.g. `H264`, `PCMU`; the payload type when it names none. */
  codec: string;
  clockRate?: number;
  /** The `a=control` of the section (a track URL, absolute or relative to the base). */
  control?: string;
}

export const MAX_SDP_MEDIA = 16;
const MAX_SDP_LINES = 1000;
const MAX_VALUE = 256;
// eslint-disable-next-line no-control-regex -- a device's text goes into a msg without control characters
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** A value of the description as given to a flow: bounded, without control characters. */
function clean(text: string, max: number): string {
  return text.slice(0, max).replace(CONTROLS, '');
}

/** RFC 3551 static payload types: encoding and clock rate. */
const STATIC_TYPES: Record<string, [string, number]> = {
  '0': ['PCMU', 8000],
  '3': ['GSM', 8000],
  '4': ['G723', 8000],
  '5': ['DVI4', 8000],
  '6': ['DVI4', 16000],
  '7': ['LPC', 8000],
  '8': ['PCMA', 8000],
  '9': ['G722', 8000],
  '10': ['L16', 44100],
  '11': ['L16', 44100],
  '12': ['QCELP', 8000],
  '13': ['CN', 8000],
  '14': ['MPA', 90000],
  '15': ['G728', 8000],
  '18': ['G729', 8000],
  '25': ['CelB', 90000],
  '26': ['JPEG', 90000],
  '28': ['nv', 90000],
  '31': ['H261', 90000],
  '32': ['MPV', 90000],
  '33': ['MP2T', 90000],
  '34': ['H263', 90000],
};

interface Section {
  type: string;
  format: string;
  rtpmap: Map<string, string>;
  control?: string;
}

export function parseSdp(sdp: string): SdpMedia[] {
  const lines = sdp.split(/\r?\n/, MAX_SDP_LINES);
  if (!lines[0]?.trim().startsWith('v=')) throw new IpcamError('EPARSE', 'The RTSP answer holds no SDP description (no v= line)');
  const sections: Section[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line.startsWith('m=')) {
      if (sections.length >= MAX_SDP_MEDIA) break;
      const [type = '', , , format = ''] = line.slice(2).split(/\s+/, 4);
      sections.push({ type: clean(type, 32), format: clean(format, 32), rtpmap: new Map() });
      continue;
    }
    const current = sections[sections.length - 1];
    if (!current) continue;
    if (line.startsWith('a=rtpmap:')) {
      const match = /^a=rtpmap:(\d{1,3})\s+(\S{1,128})/.exec(line);
      if (match) current.rtpmap.set(match[1] as string, match[2] as string);
    } else if (line.startsWith('a=control:')) {
      current.control = clean(line.slice('a=control:'.length).trim(), MAX_VALUE);
    }
  }
  return sections.map(toMedia);
}

function toMedia(section: Section): SdpMedia {
  const media: SdpMedia = { type: section.type, codec: section.format };
  const mapped = section.rtpmap.get(section.format);
  if (mapped !== undefined) {
    const [codec = '', rate] = mapped.split('/');
    media.codec = clean(codec, 32);
    const clockRate = Number(rate);
    if (Number.isSafeInteger(clockRate) && clockRate > 0) media.clockRate = clockRate;
  } else if (STATIC_TYPES[section.format]) {
    const [codec, clockRate] = STATIC_TYPES[section.format] as [string, number];
    media.codec = codec;
    media.clockRate = clockRate;
  }
  if (section.control !== undefined && section.control !== '') media.control = section.control;
  return media;
}
