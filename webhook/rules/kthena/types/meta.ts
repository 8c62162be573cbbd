/** The metadata every Kthena kind embeds, as its webhooks decode it. */
import { struct } from '../../../util/go-decode/composites.js';
import { goString } from '../../../util/go-decode/scalars.js';

export const typeMeta = { apiVersion: goString, kind: goString };
/** Only what the rules read; the API server owns the rest of the metadata. */
export const objectMeta = struct({ name: goString, namespace: goString });
