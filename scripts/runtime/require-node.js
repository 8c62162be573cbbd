// @ts-check
/**
 * The first thing every entry point runs (the bins, `npm start`, `npm test`, the scripts tsx runs,
 * `npm ci` as the preinstall script): on a Node.js older than package.json's `engines` it prints one
 * line, naming the version found, the version required and how to install it, and exits 1. Without
 * it an older Node fails later inside a dependency, with a stack trace that names neither.
 *
 * It must run before anything else is loaded, so it imports only Node's own modules and uses no
 * syntax or API newer than Node 14's. An entry point imports it first: imports are evaluated in
 * order, so the modules imported after it never run on an unsupported Node.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** @type {unknown} */
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const engines =
  typeof manifest === 'object' && manifest !== null && 'engines' in manifest ? manifest.engines : undefined;
const node = typeof engines === 'object' && engines !== null && 'node' in engines ? engines.node : undefined;
/** package.json's engines.node: `>=24` or `>=24.7.0`. */
const range = typeof node === 'string' ? node : '';
const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range);
if (!match) throw new Error('package.json engines.node must read >=<version>, not ' + range);
const required = [Number(match[1]), Number(match[2] || 0), Number(match[3] || 0)];
const found = process.versions.node.split('.').map(Number);

let older = false;
for (let i = 0; i < 3; i++) {
  if (found[i] !== required[i]) {
    older = Number(found[i]) < Number(required[i]);
    break;
  }
}
if (older) {
  const wanted = range.replace(/^>=\s*/, '');
  const installer = relative(process.cwd(), join(root, 'scripts', 'runtime', 'install-node.sh'));
  process.stderr.write(
    'admission-operator needs Node.js ' +
      wanted +
      ' or later (package.json engines: ' +
      range +
      '); this is ' +
      'Node.js ' +
      process.version +
      ' (' +
      process.execPath +
      '). Install Node.js ' +
      wanted +
      ' with: ' +
      'PATH="$(' +
      installer +
      '):$PATH"\n',
  );
  process.exit(1);
}
