/**
 * The decisions a rule returns, built only through these: allow (with warnings, if any), mutate,
 * deny with a code, and badRequest (400). A rule's refusal reaches deny through `decisionOf`
 * (webhook/rules/shared/findings.ts), from the Findings its checks report; the server
 * answers its own refusals (an unreadable review, a rule that threw) here directly.
 */
import type { Decision, KubeObject } from './types.js';

export const allow = (warnings?: string[]): Decision => ({
  allowed: true,
  ...(warnings && warnings.length > 0 ? { warnings } : {}),
});

/** Allowed, saying why the requester should look again. */
export const warn = (...warnings: string[]): Decision => allow(warnings);

export const mutate = (mutated: KubeObject, warnings?: string[]): Decision => ({
  allowed: true,
  mutated,
  ...(warnings && warnings.length > 0 ? { warnings } : {}),
});

/** A refusal: `message` names the field paths and the rule that refused. */
export const deny = (message: string, code = 403, reason?: string, warnings?: string[]): Decision => ({
  allowed: false,
  code,
  message,
  ...(reason ? { reason } : {}),
  ...(warnings && warnings.length > 0 ? { warnings } : {}),
});

/** A refusal of an object that is invalid: code 400, reason BadRequest. */
export const badRequest = (message: string, warnings?: string[]): Decision =>
  deny(message, 400, 'BadRequest', warnings);
