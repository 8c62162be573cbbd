/** The side-by-side bench's settings (koord-manager.ts): flags checked, and the order each round runs in. */

export const SYSTEMS = ['koord-manager', 'ours', 'none'] as const;
export type System = (typeof SYSTEMS)[number];

export interface SideBySideSettings {
  rounds: number;
  burst: number;
  room: number;
  replicas: number[];
  steady: number;
  rate: number;
  scalePods: number;
  scaleNamespaces: number;
  /** Which parts run: burst, steady, scale. */
  parts: string[];
}

/** The settings from the bench's flags. */
export function sideBySideSettings(flags: ReadonlyMap<string, string>, rounds: number): SideBySideSettings {
  const count = (name: string, fallback: number, allowZero = false): number => {
    const value = Number(flags.get(name) ?? fallback);
    if (!Number.isInteger(value) || value < (allowZero ? 0 : 1))
      throw new Error(`--${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer`);
    return value;
  };
  const burst = count('burst', 1000);
  const replicas = (flags.get('replicas') ?? '1,2').split(',').map(Number);
  if (replicas.some((each) => !Number.isInteger(each) || each < 1 || each > 4))
    throw new Error('--replicas takes a list of replica counts from 1 to 4, e.g. 1,2');
  const parts = (flags.get('parts') ?? 'burst,steady,scale').split(',');
  for (const part of parts)
    if (!['burst', 'steady', 'scale'].includes(part))
      throw new Error(`--parts takes burst, steady and scale; got ${part}`);
  return {
    rounds,
    burst,
    room: count('room', Math.floor(burst / 2)),
    replicas,
    steady: count('steady', 1000),
    rate: count('rate', 20),
    scalePods: count('scale-pods', 0, true),
    scaleNamespaces: count('scale-namespaces', 400),
    parts,
  };
}

/** The three systems in the order of round `round`: rotated, so none always runs first or last. */
export function rotation(round: number): System[] {
  const shift = round % SYSTEMS.length;
  return [...SYSTEMS.slice(shift), ...SYSTEMS.slice(0, shift)];
}
