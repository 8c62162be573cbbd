#!/usr/bin/env node
// @ts-check
/**
 * The `admission-operator` executable (and, through kubectl-admit.js, the kubectl plugin). From a
 * checkout it runs the TypeScript sources through tsx; where only the build is present (an
 * installed package) it runs dist/. With no subcommand it is the operator as the image runs it
 * (against $KUBECONFIG or in-cluster; `npm start` adds the local control plane).
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../scripts/runtime/require-node.js';
import { existsSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

const source = fileURLToPath(new URL('../operator/main.ts', import.meta.url));
const built = new URL('../dist/operator/main.js', import.meta.url);

if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source);
} else {
  await import(built.href);
}
