import { decodeImage, imageBase64, type PlateDetection } from './parse';

/** How a plate message carries the pictures: left out, decoded to Buffers, or as base64 text. */
export const IMAGE_MODES = ['none', 'buffer', 'base64'] as const;
export type ImageMode = (typeof IMAGE_MODES)[number];
export type Picture = 'plate' | 'scene';

/**
 * A plate as a message carries it (ipcam-plate-event's `msg.payload`, what the plates widget
 * sends on a click): the detection's fields, the socket's address it came from (`sender`; what
 * `device` says is the sender's own claim) and, with an image mode other than `none`, each
 * picture asked for that is one (placeholders left out).
 */
export interface PlateEvent extends Omit<PlateDetection, 'kind' | 'images'> {
  sender: string;
  images?: Partial<Record<Picture, Buffer | string>>;
}

const BOTH: readonly Picture[] = ['plate', 'scene'];

/** The message of a plate post: topic the plate, payload a `PlateEvent` with the `pictures` asked for. */
export function plateMessage(p: PlateDetection, sender: string, images: ImageMode, pictures: readonly Picture[] = BOTH): { topic: string; payload: PlateEvent } {
  const payload: PlateEvent = {
    plate: p.plate,
    listType: p.listType,
    ...(p.group !== undefined && { group: p.group }),
    ...(p.owner !== undefined && { owner: p.owner }),
    ...(p.direction !== undefined && { direction: p.direction }),
    ...(p.confidence !== undefined && { confidence: p.confidence }),
    ...(p.channel !== undefined && { channel: p.channel }),
    time: p.time,
    device: p.device,
    sender,
    ...(p.vehicle && { vehicle: p.vehicle }),
  };
  if (images !== 'none') {
    const chosen: Partial<Record<Picture, Buffer | string>> = {};
    for (const which of pictures) {
      // base64 is passed on as posted once checked: decoding and encoding again gave the same text.
      const image = images === 'buffer' ? decodeImage(p.images[which]) : imageBase64(p.images[which]);
      if (image) chosen[which] = image;
    }
    payload.images = chosen;
  }
  return { topic: p.plate, payload };
}
