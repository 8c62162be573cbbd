/**
 * Builds every oracle the differential suite compares against, without running it: .ci/run builds
 * them in the background while other suites run (`npm run test:differential` waits for a build under
 * way instead of starting its own). In the order the suite first needs them: the release we follow,
 * Kthena's, then the older Koordinator release.
 */
import { ensureOracle, KOORDINATOR_VERSIONS } from './oracle-build.js';
import { ensureKthenaOracle } from './kthena/oracle-build.js';

const log = (line: string): void => {
  console.error(`[oracles] ${line}`);
};

const [reference, ...older] = KOORDINATOR_VERSIONS;
await ensureOracle(log, reference);
await ensureKthenaOracle(log);
for (const version of older) await ensureOracle(log, version);
