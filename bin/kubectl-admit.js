#!/usr/bin/env node
// @ts-check
/** `kubectl admit …`: kubectl runs `kubectl-admit` from PATH with the arguments after `admit`. */
import process from 'node:process';

process.argv.splice(2, 0, 'admit');
await import('./admission-operator.js');
