import { DETECTION_STALL_TIMEOUT, detectionPath, parseIdList, parseLevels, readDetection, type DetectionEmit, type DetectionLevel, type DetectionType } from '../../lib/ops/io';
import { settingsProblem } from '../../lib/settings';
import { levelEvent, levelsRead } from '../../lib/status/status';
import { RepeatWatch } from '../../lib/stream/repeat';
import { handleInput } from '../action';
import { spec } from './spec';
import type { Node, NodeAPI, NodeDef, NodeMessage } from '../red';
import { handleCommands, refuseStream, superviseStream } from '../stream-node';

interface DetectionDef extends NodeDef {
  device?: string;
  detection?: string;
  groups?: string;
  mode?: string;
  emit?: string;
}

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
  function IpcamDetectionStreamNode(this: Node, def: DetectionDef): void {
    RED.nodes.createNode(this, def);
    const type = (def.detection || 'motion') as DetectionType;
    const policy = (def.emit || 'change') as DetectionEmit;
    const shouldEmit = emitter(policy);
    const toMessage = (levels: DetectionLevel[]): NodeMessage => ({ topic: type, payload: levels });

    if (def.mode === 'single') {
      // Checked on deploy by handleInput (DESIGN): one out of its rules is a red status naming it,
      // and every message gets that EINPUT. Emit is not one of them: single mode has no use for it
      // (its dialog hides the row), so a stale value there must not stop the node.
      const settings = { detection: def.detection, groups: def.groups, mode: def.mode };
      const groups = settingsProblem(spec, settings) === undefined ? parseIdList(def.groups, 'Groups') : [];
      // One reading per input message, on the device's pool like any request.
      handleInput(
        RED,
        this,
        spec,
        def.device,
        async (msg, client, signal) => {
          const levels = await readDetection(client, type, groups, signal);
          msg.topic = type;
          msg.payload = levels;
          return levelsRead(levels.length);
        },
        settings,
      );
      return;
    }
    // The same check on deploy as single mode's, of every setting (Emit too).
    const refused = settingsProblem(spec, def);
    if (refused) return refuseStream(this, refused);
    const repeats = policy === 'every' ? undefined : new RepeatWatch();
    const control = superviseStream(
      RED,
      this,
      def.device,
      () => detectionPath(type, parseIdList(def.groups, 'Groups'), false),
      (part) => {
        // An idle stream sends the same reading every second: the same bytes make the same levels,
        // which 'change' and 'trigger' drop, so a repeat is dropped before it is parsed.
        if (repeats?.repeats(part.body)) return;
        const levels = parseLevels(part.body.toString('latin1'));
        if (levels.length === 0 || !shouldEmit(levels)) return;
        this.send(toMessage(levels));
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
