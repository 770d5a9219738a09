import type { DefaultedParam, Param } from './input/params';
import type { PayloadSpec } from './input/payload';
import type { Status, StatusWordName } from './status/status';
import type { DeviceClient } from './transport/client';

/** A node's settings by name, each with the parser of lib that holds its rule. */
export type SettingRules = Readonly<Record<string, Param<unknown>>>;

/**
 * The settings of a node as its messages use them, parsed once on deploy by their rules: a
 * setting left blank (or absent from an older flow) is its rule's default (withDefault), or
 * undefined.
 */
export type SettingsOf<S extends SettingRules> = { readonly [K in keyof S]: S[K] extends DefaultedParam<infer T> ? T : (S[K] extends Param<infer T> ? T : never) | undefined };

/** A node's settings as the flow file stores them: what its dialog saved, or an older flow's. */
export type StoredSettings = Readonly<Record<string, unknown>>;

/**
 * What a node folder declares of its node type (`nodes/<type>/spec.ts`), in place of tables by
 * node type in lib/: a new node is its folder. The rules (ranges, allowed values) stay in lib/,
 * each written once; a spec says which of them the node's settings and payload take. The node's
 * runtime gives its spec to the shared input handling (settings parsed at deploy, payload keys
 * checked before anything is sent) and the build writes the editor's rules and each help's Status
 * line from every folder's.
 */
export interface NodeSpec<S extends SettingRules = SettingRules> extends PayloadSpec {
  /** The node type, as package.json and RED.nodes.registerType name it: its folder's name. */
  readonly type: string;
  /**
   * The settings a dialog checks and a deploy refuses, by setting name. An `overrides` setting
   * (OVERRIDES) makes the node one whose payload only overrides settings that alone make a
   * whole command.
   */
  readonly settings: S;
  /**
   * The words of the status vocabulary (lib/status) the node may show, in the order its help's
   * "Status:" line lists them; none for a config node, which shows no status.
   */
  readonly status?: readonly StatusWordName[];
}

/** What one run of an action node gives its message: the payload, other msg properties, the status, a warning. */
export interface ActionOutput {
  readonly payload: unknown;
  /** Properties of msg beside the payload (`total`, `contentType`, `topic`). */
  readonly fields?: Readonly<Record<string, unknown>>;
  readonly status: Status;
  /** Said once with node.warn (a batch's plates that failed while the others went through). */
  readonly warning?: string;
}

/** What a run is given beside its input. */
export interface ActionContext<K> {
  /** Aborted when the node closes. */
  readonly signal: AbortSignal;
  /** The device was named by msg.device, not the node's own setting. */
  readonly borrowed: boolean;
  /**
   * Keeps the device's client open past this message until `release` is given a promise that
   * settles (a PTZ Stop that a borrowed device still owes).
   */
  hold(): (settled: Promise<unknown>) => void;
  /** Shows a long operation's progress (an upload) as the node's status. */
  progress(stage: string, percent: number): void;
  /** What the node keeps across its messages (`keep`), or undefined. */
  readonly kept: K;
}

/** What an action node keeps across its messages (`kept` of each run), and how it lets go of it when the node closes. */
export interface Keeper<P, K> {
  /** Made on deploy from what the settings gave; `warn` is the node's. */
  open(plan: P, warn: (text: string) => void): K;
  /** Ends what is kept; the node's close waits for it. */
  close(kept: K): Promise<void>;
}

/**
 * An action node declared whole (nodes/<type>/spec.ts): its settings and payload keys, how a
 * payload and the settings become the operation's input, the operation(s) it runs, and how the
 * result becomes the message. `registerActionNode` (nodes/action.ts) runs every action node by
 * it: settings parsed on deploy, keys checked, input mapped, one run, result mapped.
 */
export interface ActionSpec<S extends SettingRules, P, I, R, K = undefined> extends NodeSpec<S> {
  /**
   * On deploy, once each setting passed its rule: what every message starts from. A node whose
   * settings are more than a rule can tell (request's Operation against its table, its stored
   * parameters) reads them here from `stored`; an IpcamError thrown refuses the node on deploy
   * as a setting out of its rules does.
   */
  deploy(settings: SettingsOf<S>, stored: StoredSettings): P;
  /** msg.payload (its keys already checked) merged with the settings: EINPUT for one it cannot read, and nothing is sent. */
  input(payload: unknown, plan: P): I;
  /** The operation(s) the input runs, on the device's client. */
  run(client: DeviceClient, input: I, context: ActionContext<K>): Promise<R>;
  /** The result as the message: payload, other properties, status. */
  output(result: R, input: I, plan: P): ActionOutput;
  /** What the node keeps across its messages (the PTZ movers), if anything. */
  readonly keep?: Keeper<P, K>;
}

/** The parts of an action spec that starts every message from its parsed settings (no `deploy`). */
type SettingsAction<S extends SettingRules, I, R, K> = Omit<ActionSpec<S, SettingsOf<S>, I, R, K>, 'deploy'> & { deploy?: never };

/**
 * An action spec with its types inferred from its parts. Without `deploy`, every message starts
 * from the parsed settings themselves, as most nodes do.
 */
export function defineAction<S extends SettingRules, I, R, K = undefined>(spec: SettingsAction<S, I, R, K>): ActionSpec<S, SettingsOf<S>, I, R, K>;
export function defineAction<S extends SettingRules, P, I, R, K>(spec: ActionSpec<S, P, I, R, K>): ActionSpec<S, P, I, R, K>;
export function defineAction<S extends SettingRules, P, I, R, K>(spec: ActionSpec<S, P, I, R, K> | SettingsAction<S, I, R, K>): ActionSpec<S, P, I, R, K> | ActionSpec<S, SettingsOf<S>, I, R, K> {
  if (spec.deploy) return spec;
  return { ...spec, deploy: (settings: SettingsOf<S>) => settings };
}
