/**
 * resource-qos-config's network QoS checks (CheckNetQosCfg in
 * resource_qos_checker.go),
 * per strategy (the cluster one, then each node strategy), over the lsr, ls and be classes:
 *
 * 1. each of ingressRequest, ingressLimit, egressRequest, egressLimit is an integer percentage from
 *    0 to 100 or a quantity string (systemClass and cgroupRoot are not examined, as in Koordinator);
 * 2. the requests of one strategy do not mix percentages and quantities (limits are not examined);
 * 3. the percentage requests add up to at most 100, per direction;
 * 4. the quantity requests add up to at most the strategy's totalNetworkBandwidth in system-config.
 *
 * Deliberate divergences (docs/rules/validate-configmap.md), where Koordinator's arithmetic refuses
 * valid configs or accepts invalid ones:
 * - Koordinator subtracts quantity requests from 100 in (3), so "500M" fails the percentage check,
 *   and percentages from the byte total in (4). Here each check sums only its own format.
 * - Koordinator compares node strategy i against the system node strategy with a deep-equal
 *   selector, else 0 (so any quantity request fails) whenever system-config has node strategies,
 *   and against 0 when no totalNetworkBandwidth is set. Here it is that strategy's total when set,
 *   else the cluster total; with no total known (koordlet then reads the NIC speed) (4) is skipped.
 */
import {
  type FieldError,
  type FieldPath,
  GoStringer,
  forbidden,
  invalid,
} from '../../shared/field-errors.js';
import { formatQuantity, readQuantity } from '../../../util/quantity.js';
import type { IntOrString } from '../../../util/go-decode/scalars.js';
import type { RESOURCE_QOS_CONFIG, SYSTEM_CONFIG } from './koordinator-shapes.js';
import type { LabelSelectorJson } from './node-selectors.js';

export type ResourceQosConfig = NonNullable<ReturnType<typeof RESOURCE_QOS_CONFIG>>;
export type SystemConfig = NonNullable<ReturnType<typeof SYSTEM_CONFIG>>;
type QosStrategy = NonNullable<ResourceQosConfig['clusterStrategy']>;

const CLASSES = ['lsrClass', 'lsClass', 'beClass'] as const;
const FIELDS = ['ingressRequest', 'ingressLimit', 'egressRequest', 'egressLimit'] as const;
const DIRECTIONS = ['ingressRequest', 'egressRequest'] as const;
const NANO = 1_000_000_000n;

/** `Quantity.Value()`: whole units, rounded away from zero. */
function wholeUnits(nanos: bigint): bigint {
  return nanos >= 0n ? (nanos + NANO - 1n) / NANO : -((-nanos + NANO - 1n) / NANO);
}

/** A quantity as `resource.ParseQuantity` reads it (no surrounding spaces), in whole units. */
function quantityValue(text: string): bigint | undefined {
  if (text.trim() !== text) return undefined;
  const read = readQuantity(text);
  return read.ok ? wholeUnits(read.value) : undefined;
}

interface Total {
  value: bigint;
  /** Where it was set, for the message. */
  source: string;
}

export function networkQosProblems(
  qos: ResourceQosConfig,
  system: SystemConfig | undefined,
  root: FieldPath,
): FieldError[] {
  const errors: FieldError[] = [];
  const clusterTotal = totalOf(system?.clusterStrategy?.totalNetworkBandwidth, 'clusterStrategy');
  if (qos.clusterStrategy) {
    checkStrategy(qos.clusterStrategy, root.child('clusterStrategy'), clusterTotal, errors);
  }
  for (const [index, strategy] of (qos.nodeStrategies ?? []).entries()) {
    if (!strategy) continue;
    const total = nodeTotal(strategy.nodeSelector, system) ?? clusterTotal;
    checkStrategy(strategy, root.child('nodeStrategies').index(index), total, errors);
  }
  return errors;
}

function totalOf(nanos: bigint | undefined, source: string): Total | undefined {
  const value = nanos === undefined ? 0n : wholeUnits(nanos);
  return value > 0n ? { value, source } : undefined;
}

function nodeTotal(
  selector: LabelSelectorJson | undefined,
  system: SystemConfig | undefined,
): Total | undefined {
  const wanted = selectorIdentity(selector);
  for (const [index, strategy] of (system?.nodeStrategies ?? []).entries()) {
    if (strategy && selectorIdentity(strategy.nodeSelector) === wanted) {
      return totalOf(strategy.totalNetworkBandwidth, `nodeStrategies[${index}]`);
    }
  }
  return undefined;
}

/** Selectors compared by meaning: label order and absent-versus-empty lists do not matter. */
function selectorIdentity(selector: LabelSelectorJson | undefined): string {
  const labels = [...(selector?.matchLabels ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const expressions = (selector?.matchExpressions ?? []).map((expression) => [
    expression?.key ?? '',
    expression?.operator ?? '',
    expression?.values ?? [],
  ]);
  return JSON.stringify([labels, expressions]);
}

function checkStrategy(
  strategy: QosStrategy,
  path: FieldPath,
  total: Total | undefined,
  errors: FieldError[],
): void {
  let valid = true;
  for (const className of CLASSES) {
    const networkQOS = strategy[className]?.networkQOS;
    for (const field of FIELDS) {
      const value = networkQOS?.[field];
      if (value === undefined) continue;
      const at = path.child(className, 'networkQOS', field);
      if (value.type === 'int' && (value.value < 0n || value.value > 100n)) {
        errors.push(
          invalid(at, value.value, 'must be a percentage from 0 to 100, or a quantity string such as "50M"'),
        );
        valid = false;
      } else if (value.type === 'string' && quantityValue(value.value) === undefined) {
        errors.push(
          invalid(
            at,
            value.value,
            'must be a quantity such as "50M", or an integer percentage from 0 to 100',
          ),
        );
        valid = false;
      }
    }
  }

  const requests = (direction: (typeof DIRECTIONS)[number]): IntOrString[] =>
    CLASSES.flatMap((className) => {
      const value = strategy[className]?.networkQOS?.[direction];
      return value === undefined ? [] : [value];
    });
  const formats = new Set(DIRECTIONS.flatMap((direction) => requests(direction).map((value) => value.type)));
  if (formats.size > 1) {
    errors.push(
      forbidden(
        path,
        'the network QoS requests of lsrClass, lsClass and beClass mix integer percentages and quantity strings; use one format per strategy',
      ),
    );
    return;
  }
  if (!valid) return;

  for (const direction of DIRECTIONS) {
    let percentages = 0n;
    let quantities = 0n;
    for (const value of requests(direction)) {
      if (value.type === 'int') percentages += value.value;
      else quantities += quantityValue(value.value) ?? 0n;
    }
    if (percentages > 100n) {
      errors.push(
        invalid(
          path,
          percentages,
          `the ${direction} percentages of lsrClass, lsClass and beClass must add up to at most 100`,
        ),
      );
    }
    if (total && quantities > total.value) {
      errors.push(
        invalid(
          path,
          new GoStringer(formatQuantity(quantities * NANO)),
          `the ${direction} quantities of lsrClass, lsClass and beClass must add up to at most the totalNetworkBandwidth ${formatQuantity(total.value * NANO)} of data[system-config] ${total.source}`,
        ),
      );
    }
  }
}
