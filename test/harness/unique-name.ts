/**
 * Names for objects a test creates many of. generateName is not enough: before Kubernetes 1.32
 * the API server does not retry a generated name that is already taken and answers 409, which a
 * test would count as a failed admission (seen on 1.30.14 after a few thousand pods in a namespace).
 */
const run = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let count = 0;

/** `<prefix><run>-<n>`: unique across the processes and the objects of one test run. */
export function uniqueName(prefix: string): string {
  count += 1;
  return `${prefix}${run}-${count.toString(36)}`;
}
