/** Koordinator's node annotations for resource amplification. */
export const AMPLIFICATION_RATIO_ANNOTATION = 'node.koordinator.sh/resource-amplification-ratio';
export const RAW_ALLOCATABLE_ANNOTATION = 'node.koordinator.sh/raw-allocatable';
/** The resources Koordinator amplifies. */
export const AMPLIFIED_RESOURCES = ['cpu', 'memory'] as const;
