/**
 * A kind whose CRD the project ships (`shipsCrd` in webhook/kinds.ts) has that CRD under crds/,
 * saying what the registry says (group, plural, kind, scope, a served version), and crds/ holds
 * no CRD of a kind the registry lacks: each failure names the file to write or fix. The chart's
 * copies are generated from these (test/unit/charts/generated.test.ts checks them).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { CRDS_DIR, crdFileName, SHIPPED_CRD_KINDS } from '../../../scripts/chart/crd-copies.js';
import { ALL_KINDS } from '../../../webhook/kinds.js';

const RUN = 'npx tsx scripts/run-tests.ts unit test/unit/webhook/kind-crds.test.ts';

interface Crd {
  metadata?: { name?: string };
  spec?: {
    group?: string;
    scope?: string;
    names?: { kind?: string; plural?: string };
    versions?: { name?: string; served?: boolean }[];
  };
}

describe('the CRDs the project ships', () => {
  it('are of kinds a CRD serves', () => {
    for (const kind of ALL_KINDS.filter((kind) => kind.shipsCrd)) {
      assert.ok(
        kind.crd,
        `webhook/kinds.ts: ${kind.kind} (${kind.plural}.${kind.group || 'core'}) is built in, not served by a CRD: ` +
          `drop its shipsCrd, then run ${RUN}`,
      );
    }
  });

  for (const kind of SHIPPED_CRD_KINDS) {
    const file = `crds/${crdFileName(kind)}`;
    it(`${kind.kind}: ${file} exists and says what webhook/kinds.ts says`, () => {
      const path = join(CRDS_DIR, crdFileName(kind));
      assert.ok(
        existsSync(path),
        `${file} is missing: webhook/kinds.ts ships the CRD of ${kind.kind}; write it there (or set ` +
          `shipsCrd: false when only another project installs it), then run npm run chart:generate and ${RUN}`,
      );
      const crd = parse(readFileSync(path, 'utf8')) as Crd;
      const says = {
        name: crd.metadata?.name,
        group: crd.spec?.group,
        plural: crd.spec?.names?.plural,
        kind: crd.spec?.names?.kind,
        scope: crd.spec?.scope,
        served: (crd.spec?.versions ?? []).some((version) => version.name === kind.version && version.served),
      };
      assert.deepEqual(
        says,
        {
          name: `${kind.plural}.${kind.group}`,
          group: kind.group,
          plural: kind.plural,
          kind: kind.kind,
          scope: kind.scope,
          served: true,
        },
        `${file} disagrees with ${kind.kind}'s entry in webhook/kinds.ts (name, group, plural, kind, scope, ` +
          `served version ${kind.version}): fix one of them, then run npm run chart:generate and ${RUN}`,
      );
    });
  }

  it('are all of crds/: no CRD there of a kind the registry does not ship', () => {
    const shipped = new Set(SHIPPED_CRD_KINDS.map(crdFileName));
    for (const name of readdirSync(CRDS_DIR).filter((entry) => entry.endsWith('.yaml'))) {
      assert.ok(
        shipped.has(name),
        `crds/${name} is no kind's of webhook/kinds.ts: register its kind there (its CRD is then shipped and ` +
          `copied into the chart by npm run chart:generate), or remove the file; then run ${RUN}`,
      );
    }
  });
});
