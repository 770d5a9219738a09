import { registerActionNode } from '../action';
import { spec } from './spec';
import type { NodeAPI } from '../red';

export = (RED: NodeAPI): void => registerActionNode(RED, spec);
