#!/usr/bin/env node
// @ts-check
/** `kubectl admit …`: kubectl runs `kubectl-admit` from PATH with the arguments after `admit`. */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../scripts/runtime/require-node.js';
import process from 'node:process';

process.argv.splice(2, 0, 'admit');
await import('./admission-operator.js');
