import { DETECTION_STALL_TIMEOUT, detectionPath, parseLevels, type DetectionEmit, type DetectionLevel } from '../../lib/ops/io';
import type { StoredSettings } from '../../lib/node-spec';
import { parseSettings } from '../../lib/settings';
import { levelEvent } from '../../lib/status/status';
import { RepeatWatch } from '../../lib/stream/repeat';
import { startAction } from '../action';
import { singleReading, spec } from './spec';
import type { Node, NodeAPI, NodeDef } from '../red';
import { handleCommands, refuseStream, superviseStream } from '../stream-node';

/**
 * Decides which readings become messages: all, those that changed, or those that flip a trigger.
 * The key of the last reading is kept, not the reading: a stream repeats its levels every
 * second, and the key of the previous reading would otherwise be built again each time.
 */
function emitter(policy: DetectionEmit): (levels: DetectionLevel[]) => boolean {
  if (policy === 'every') return () => true;
  const keyOf = policy === 'change' ? (l: DetectionLevel) => `${l.group}:${l.level}:${l.threshold}` : (l: DetectionLevel) => `${l.group}:${l.triggered}`;
  let last: string | undefined;
  return (levels) => {
    const previous = last;
    last = levels.map(keyOf).join();
    if (previous === undefined) return policy === 'change' || levels.some((l) => l.triggered);
    return last !== previous;
  };
}

export = function register(RED: NodeAPI): void {
  function IpcamDetectionStreamNode(this: Node, def: NodeDef & StoredSettings): void {
    RED.nodes.createNode(this, def);
    // Each mode parses its settings once, on deploy. Emit is not a setting of single mode (its
    // dialog hides the row): a stale value there must not stop the node.
    if (def['mode'] === 'single') return startAction(RED, this, singleReading, def, parseSettings(spec.settings, def, ['emit']));
    const parsed = parseSettings(spec.settings, def);
    if (parsed.refused) return refuseStream(this, parsed.refused);
    const type = parsed.settings.detection ?? 'motion';
    const policy = parsed.settings.emit ?? 'change';
    const path = detectionPath(type, parsed.settings.groups ?? [], false);
    const shouldEmit = emitter(policy);
    const repeats = policy === 'every' ? undefined : new RepeatWatch();
    const control = superviseStream(
      RED,
      this,
      typeof def['device'] === 'string' ? def['device'] : undefined,
      () => path,
      (part) => {
        // An idle stream sends the same reading every second: the same bytes make the same levels,
        // which 'change' and 'trigger' drop, so a repeat is dropped before it is parsed.
        if (repeats?.repeats(part.body)) return;
        const levels = parseLevels(part.body.toString('latin1'));
        if (levels.length === 0 || !shouldEmit(levels)) return;
        this.send({ topic: type, payload: levels });
        const top = levels.reduce((a, b) => (b.level > a.level ? b : a));
        control?.showEvent(levelEvent(top.triggered, top.level));
      },
      { stallTimeout: DETECTION_STALL_TIMEOUT },
    );
    if (!control) return;
    control.start();
    handleCommands(this, control);
  }
  RED.nodes.registerType(spec.type, IpcamDetectionStreamNode as (this: never, def: never) => void);
};
