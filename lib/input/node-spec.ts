import type { Param } from './params';

/**
 * What a node folder declares of its node type (`nodes/<type>/spec.ts`), in place of tables by
 * node type in lib/: a new node is its folder. The rules (ranges, allowed values) stay in lib/,
 * each written once; a spec says which of them the node's settings and payload take. The node's
 * runtime gives its spec to the shared input handling (settings checked at deploy, payload keys
 * checked before anything is sent) and the build writes the editor's rules from every folder's.
 */
export interface NodeSpec {
  /** The node type, as package.json and RED.nodes.registerType name it: its folder's name. */
  readonly type: string;
  /**
   * The settings a dialog checks and a deploy refuses, by setting name. An `overrides` setting
   * (OVERRIDES) makes the node one whose payload only overrides settings that alone make a
   * whole command.
   */
  readonly settings: Readonly<Record<string, Param<unknown>>>;
  /** The keys an object `msg.payload` may hold; without them a payload object is not checked here. */
  readonly payloadKeys?: readonly string[];
  /** The keys of each item of a plate list (a list, or one item alone). */
  readonly payloadItemKeys?: readonly string[];
}
