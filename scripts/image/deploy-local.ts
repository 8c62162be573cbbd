/**
 * The operator as cluster admins run it, on the local cluster's node (`npm run deploy:local`,
 * and the end-to-end suite). Builds the image with podman (build.sh), loads it into the node's containerd (no registry:
 * `podman save` then `ctr import`), and installs or upgrades the chart as release
 * `admission-operator` in `admission-system`, waiting for its pods to be Ready.
 *
 * The image's tag is its content's id, so an unchanged build is no rollout and a changed one is.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureHelm } from '../cluster/binaries.js';
import { cacheDir, kubeconfigPath, repoRoot } from '../cluster/layout.js';
import { clusterStatus } from '../cluster/control-plane.js';
import { importImage, nodeImages, tagNodeImage } from '../cluster/node.js';

const execFileAsync = promisify(execFile);

export const releaseName = 'admission-operator';
export const releaseNamespace = 'admission-system';
export const imageRepository = 'localhost/admission-operator';
const chartDir = join(repoRoot, 'charts', 'admission-operator');

/** podman with the settings build.sh writes (runc, lowered ulimits, cgroupfs). */
const podmanEnv = { ...process.env, CONTAINERS_CONF: join(cacheDir, 'podman', 'containers.conf') };

function runInherit(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: 'inherit', env });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

async function output(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const { stdout } = await execFileAsync(command, args, { cwd: repoRoot, env, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * Builds the image, tags it `<repository>:local-<content id>` and imports it into the node's
 * containerd; resolves with the tag. `retag` gives the same content another tag (for upgrades
 * that must roll out without a rebuild). Content the node already holds is not imported again
 * (the end-to-end suite's files each build the image; a save and import costs seconds of CPU).
 */
export async function buildAndLoadImage(log: (line: string) => void, retag?: string): Promise<string> {
  const started = Date.now();
  const buildTag = `${imageRepository}:dev`;
  await runInherit(join(repoRoot, 'scripts', 'image', 'build.sh'), [buildTag]);
  const id = await output('podman', ['image', 'inspect', '--format', '{{.Id}}', buildTag], podmanEnv);
  const contentImage = `${imageRepository}:local-${id.slice(0, 12)}`;
  const tag = retag ?? `local-${id.slice(0, 12)}`;
  const image = `${imageRepository}:${tag}`;
  await output('podman', ['tag', buildTag, image], podmanEnv);
  // Only the content's own tag names what it holds: another tag may name older content.
  if ((await nodeImages()).has(contentImage)) {
    if (image !== contentImage) await tagNodeImage(contentImage, image);
    log(
      `image ${image} built; the node held its content already (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    return tag;
  }
  const work = await mkdtemp(join(tmpdir(), 'deploy-local-'));
  try {
    const archive = join(work, 'image.tar');
    await output(
      'podman',
      ['save', '--quiet', '--format', 'docker-archive', '-o', archive, image],
      podmanEnv,
    );
    await importImage(archive);
    // Under the content's own tag too, so that a later build of the same content finds it.
    if (image !== contentImage) await tagNodeImage(image, contentImage);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  log(`image ${image} built and loaded into the node in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return tag;
}

/**
 * The chart's values that verify callers as the local API server presents itself (its webhook
 * client certificate and the CA that issued it), as a cluster admin's install should.
 */
async function clientVerificationValues(): Promise<string[]> {
  const client = (await clusterStatus()).state?.webhookClient;
  if (!client)
    throw new Error('the local control plane presents no client certificate to webhooks: run cluster:up');
  return [
    '--set',
    'clientVerification.certificate.enabled=true',
    '--set-file',
    `clientVerification.certificate.ca=${client.caFile}`,
    '--set-json',
    `clientVerification.certificate.subjectNames=${JSON.stringify([client.subject])}`,
  ];
}

/**
 * `helm upgrade --install` of the chart with the local image, verifying callers; extra
 * `--set`/`--values` arguments pass through (and come last, so they win).
 */
export async function helmUpgrade(tag: string, extraArgs: string[] = [], wait = true): Promise<void> {
  await runInherit(await ensureHelm(), [
    'upgrade',
    '--install',
    releaseName,
    chartDir,
    '--namespace',
    releaseNamespace,
    '--create-namespace',
    '--kubeconfig',
    kubeconfigPath,
    '--set',
    `image.repository=${imageRepository}`,
    '--set',
    `image.tag=${tag}`,
    // Imported, never pulled: no registry is reachable.
    '--set',
    'image.pullPolicy=Never',
    // The local cluster has neither Koordinator nor Kthena, whose charts would install these CRDs.
    '--set',
    'crds.enabled=true',
    ...(await clientVerificationValues()),
    ...(wait ? ['--wait', '--timeout', '5m'] : []),
    ...extraArgs,
  ]);
}
