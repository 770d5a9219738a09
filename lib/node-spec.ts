import type { Param } from './input/params';
import type { PayloadSpec } from './input/payload';
import type { StatusWordName } from './status/status';

/**
 * What a node folder declares of its node type (`nodes/<type>/spec.ts`), in place of tables by
 * node type in lib/: a new node is its folder. The rules (ranges, allowed values) stay in lib/,
 * each written once; a spec says which of them the node's settings and payload take. The node's
 * runtime gives its spec to the shared input handling (settings checked at deploy, payload keys
 * checked before anything is sent) and the build writes the editor's rules and each help's Status
 * line from every folder's.
 */
export interface NodeSpec extends PayloadSpec {
  /** The node type, as package.json and RED.nodes.registerType name it: its folder's name. */
  readonly type: string;
  /**
   * The settings a dialog checks and a deploy refuses, by setting name. An `overrides` setting
   * (OVERRIDES) makes the node one whose payload only overrides settings that alone make a
   * whole command.
   */
  readonly settings: Readonly<Record<string, Param<unknown>>>;
  /**
   * The words of the status vocabulary (lib/status) the node may show, in the order its help's
   * "Status:" line lists them; none for a config node, which shows no status.
   */
  readonly status?: readonly StatusWordName[];
}
