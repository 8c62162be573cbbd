/**
 * The node's sandbox image, made here: no registry is reachable, so the pause program built with
 * the node runtime is packed into a one-layer OCI image (FROM scratch, by hand: no image builder
 * needed) and imported into containerd under the name containerd is configured to use.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './node-network.js';

/** The sandbox image's name: containerd's `pinned_images.sandbox`, so the kubelet never collects it. */
export const pauseImage = 'localhost/local-node/pause:1';

interface Blob {
  digest: string;
  size: number;
}

async function writeBlob(blobsDir: string, content: Buffer): Promise<Blob> {
  const hex = createHash('sha256').update(content).digest('hex');
  await writeFile(join(blobsDir, hex), content);
  return { digest: `sha256:${hex}`, size: content.length };
}

/** Writes an OCI image archive holding `pauseBinary` as /pause and returns its path. */
export async function buildPauseImageArchive(pauseBinary: string, outDir: string): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'pause-image-'));
  try {
    const rootfs = join(work, 'rootfs');
    const layout = join(work, 'layout');
    const blobsDir = join(layout, 'blobs', 'sha256');
    await mkdir(rootfs);
    await mkdir(blobsDir, { recursive: true });
    await copyFile(pauseBinary, join(rootfs, 'pause'));
    const layerTar = join(work, 'layer.tar');
    await run('tar', [
      '--sort=name',
      '--mtime=@0',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '-C',
      rootfs,
      '-cf',
      layerTar,
      'pause',
    ]);
    const layer = await writeBlob(blobsDir, await readFile(layerTar));
    const config = await writeBlob(
      blobsDir,
      Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          config: { Entrypoint: ['/pause'], User: '65535:65535' },
          rootfs: { type: 'layers', diff_ids: [layer.digest] },
        }),
      ),
    );
    const manifest = await writeBlob(
      blobsDir,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
          layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
        }),
      ),
    );
    await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    await writeFile(
      join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            ...manifest,
            platform: { architecture: 'amd64', os: 'linux' },
            annotations: { 'io.containerd.image.name': pauseImage },
          },
        ],
      }),
    );
    await mkdir(outDir, { recursive: true });
    const archive = join(outDir, 'pause-image.tar');
    await run('tar', ['-C', layout, '-cf', archive, 'oci-layout', 'index.json', 'blobs']);
    return archive;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
