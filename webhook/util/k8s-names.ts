/**
 * Kubernetes' syntax rules for label keys and values (apimachinery's validation package), with
 * the reason a string breaks them.
 */
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** True when `name` can name a namespace (an RFC 1123 DNS label, at most 63 characters). */
export function isNamespaceName(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (value !== '' && !NAME.test(value)) {
    return "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `key` is not a valid label key (or qualified resource name), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "must have at most one '/' (an optional DNS-subdomain prefix, then a name)";
  const name = parts.length === 2 ? (parts[1] ?? '') : key;
  const prefix = parts.length === 2 ? (parts[0] ?? '') : undefined;
  if (prefix !== undefined) {
    if (prefix === '') return 'the prefix before / must not be empty';
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return 'the prefix must be a lowercase DNS subdomain (e.g. example.com), at most 253 characters';
    }
  }
  if (name === '') return 'the name must not be empty';
  if (name.length > 63) return 'the name must be no more than 63 characters';
  if (!NAME.test(name)) {
    return "the name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}
