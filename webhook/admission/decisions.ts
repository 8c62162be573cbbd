/** Shorthands rules use to build decisions. */
import type { Decision, KubeObject } from './types.js';

export const allow = (warnings?: string[]): Decision => ({
  allowed: true,
  ...(warnings ? { warnings } : {}),
});

export const mutate = (mutated: KubeObject, warnings?: string[]): Decision => ({
  allowed: true,
  mutated,
  ...(warnings ? { warnings } : {}),
});

/** A refusal: `message` names the field paths and the rule that refused. */
export const deny = (message: string, code = 403, reason?: string): Decision => ({
  allowed: false,
  code,
  message,
  ...(reason ? { reason } : {}),
});
