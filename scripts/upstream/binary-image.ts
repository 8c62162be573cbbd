/**
 * An image of one static Go binary, as upstream projects ship their managers (a distroless-like
 * root: the binary, a writable /tmp, the host's CA bundle and a passwd naming nobody), made with
 * `podman import` (no base image, nothing pulled) and loaded into the local node's containerd the
 * way our own image is (`podman save`, then `ctr import`). For the upstream managers the
 * end-to-end suite runs beside ours: koord-manager and Kthena's controller-manager.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { cacheDir } from '../cluster/layout.js';
import { importImage } from '../cluster/node.js';

const execFileAsync = promisify(execFile);

/** podman with the settings scripts/image/build.sh writes (runc, lowered ulimits, cgroupfs). */
const podmanEnv = { ...process.env, CONTAINERS_CONF: join(cacheDir, 'podman', 'containers.conf') };

const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export interface BinaryImage {
  /** The image's full name, e.g. `localhost/koordinator-sh/koord-manager:v1.8.0`. */
  image: string;
  /** The static binary to run. */
  binary: string;
  /** Where the binary lives in the image (its charts' `command`), e.g. `/koord-manager`. */
  path: string;
}

async function podman(args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('podman', args, { env: podmanEnv, maxBuffer: 16 * 2 ** 20 });
  return stdout.trim();
}

/** Makes the image (again: it takes seconds) and imports it into the node's containerd. */
export async function loadBinaryImage(spec: BinaryImage, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const work = await mkdtemp(join(tmpdir(), 'binary-image-'));
  try {
    const root = join(work, 'root');
    await mkdir(join(root, 'tmp'), { recursive: true });
    await chmod(join(root, 'tmp'), 0o1777);
    await mkdir(join(root, 'etc', 'ssl', 'certs'), { recursive: true });
    await copyFile(HOST_CA_BUNDLE, join(root, 'etc', 'ssl', 'certs', basename(HOST_CA_BUNDLE))).catch(
      () => {},
    );
    await writeFile(
      join(root, 'etc', 'passwd'),
      'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n',
    );
    await mkdir(join(root, spec.path, '..'), { recursive: true });
    await copyFile(spec.binary, join(root, spec.path));
    await chmod(join(root, spec.path), 0o755);
    const layer = join(work, 'root.tar');
    await execFileAsync('tar', ['--owner=0', '--group=0', '-C', root, '-cf', layer, '.']);
    await podman([
      'import',
      '-q',
      '--change',
      `ENTRYPOINT ${JSON.stringify([spec.path])}`,
      '--change',
      'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
      layer,
      spec.image,
    ]);
    const archive = join(work, 'image.tar');
    await podman(['save', '--quiet', '--format', 'docker-archive', '-o', archive, spec.image]);
    await importImage(archive);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  log(
    `image ${spec.image} made from ${spec.binary} and loaded into the node in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
