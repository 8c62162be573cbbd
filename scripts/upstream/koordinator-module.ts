/**
 * Koordinator's Go module at one release, copied out for the builds that compile inside it
 * (koord-manager, the differential oracles): see go-module.ts.
 */
import type { ModuleSource } from '../go-build.js';
import { copyGoModule } from './go-module.js';

const KOORDINATOR_MODULE = 'github.com/koordinator-sh/koordinator';

/** A writable copy of the module at `version`, removed by its cleanup. */
export function copyKoordinatorModule(version: string, prefix: string): Promise<ModuleSource> {
  return copyGoModule(KOORDINATOR_MODULE, version, prefix);
}
