/**
 * The operator process exactly as `operator/main.ts` starts it, but with its clock skewed:
 *
 *   node <bundle>/skewed.mjs <offset ms> [operator arguments...]   (test/harness/operator-bundle.ts)
 *
 * Only tests start this entry, so a production replica has no way to skew its clock.
 */
import { startOperatorProcess } from '../../operator/startup.js';

const [offsetArgument = '', ...argv] = process.argv.slice(2);
const offsetMs = Number(offsetArgument);
if (offsetArgument.trim() === '' || !Number.isSafeInteger(offsetMs)) {
  console.error(
    `skewed-operator: the first argument must be the clock offset in ms, got "${offsetArgument}"`,
  );
  process.exit(2);
}
await startOperatorProcess({ argv, env: process.env, clock: () => new Date(Date.now() + offsetMs) });
