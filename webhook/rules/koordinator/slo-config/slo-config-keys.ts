/**
 * One checker per slo-controller-config data key: parse the JSON, decode it to its Go shape, then
 * run, in Koordinator's order, the node strategies' selector checks (its checker's init), the
 * validator tags (ConfigParamValid), the key's own checks and NodeStrategiesOverlap. Every problem
 * is reported, not only the first; only a value that does not decode stops its key early, as in Go,
 * where nothing else is checked once Unmarshal fails.
 *
 * ProfileParamValid (every strategy named, names unique) is not run: Koordinator runs it only with
 * --node-strategy-name-need-check=true, and that flag defaults to false.
 */
import { atField, type FieldError, FieldPath } from '../../shared/field-errors.js';
import { failure, success, type Result } from '../../../util/result.js';
import type { Decoder } from '../../../util/go-decode/decoding.js';
import { type DecodeReport, decodeJsonText } from '../../../util/go-decode/entry-points.js';
import {
  CPU_NORMALIZATION_CONFIG,
  HOST_APPLICATION_CONFIG,
  hostApplicationProblems,
  resourceAmplificationConfig,
  resourceAmplificationProblems,
} from './extra-shapes.js';
import {
  COLOCATION_CONFIG,
  CPU_BURST_CONFIG,
  RESOURCE_QOS_CONFIG,
  RESOURCE_THRESHOLD_CONFIG,
  SYSTEM_CONFIG,
} from './koordinator-shapes.js';
import { type SystemConfig, networkQosProblems } from './network-qos.js';
import {
  type NodeStrategy,
  type StrategyEntry,
  labelsText,
  nodeStrategiesOf,
  searchOverlaps,
  strategyList,
} from './node-selectors.js';

const SYSTEM_CONFIG_KEY = 'system-config';

/** What a key's own checks may look at besides its value. */
export interface KeyContext {
  /** The new ConfigMap data. */
  data: Readonly<Record<string, string>>;
  /** Whether a key's value is checked in this request (non-empty and changed). */
  checked(key: string): boolean;
}

/** A key's result. `strategies` is set when every node strategy's selector converted. */
export interface KeyOutcome {
  problems: FieldError[];
  /** Keys the slo-controller would ignore (likely typos), as `data[key]: path`. */
  unknownFields?: string[];
  strategies?: NodeStrategy[];
}

export interface KeyChecker {
  key: string;
  /** `nodeStrategies` or `nodeConfigs`: how messages name the key's node strategies. */
  strategiesField: string;
  check(text: string, context: KeyContext): KeyOutcome;
  /** The node strategies as Koordinator's node validator sees them: undefined unless the value decodes. */
  strategiesOf(text: string): NodeStrategy[] | undefined;
}

interface KeyDefinition<T> {
  key: string;
  decoder: Decoder<T>;
  strategiesField: 'nodeStrategies' | 'nodeConfigs';
  strategies(config: T): readonly (StrategyEntry | undefined)[] | undefined;
  ownProblems?(config: T, root: FieldPath, context: KeyContext): FieldError[];
}

/** The key's field, `data[key]`: problems with its value as a whole are reported there. */
export const keyPath = (key: string): FieldPath => FieldPath.of('data').key(key);

/** The value of the key as the JSON document it holds: `data[key]: nodeStrategies[0]`. */
const valueRoot = (key: string): FieldPath => keyPath(key).json();

/** The key's value decoded (undefined for JSON null); what the slo-controller fails to parse else. */
const decode = <T>(
  definition: KeyDefinition<T>,
  text: string,
  report?: DecodeReport,
): Result<T | undefined, FieldError[]> =>
  decodeJsonText(text, definition.decoder, valueRoot(definition.key), report);

function checkerFor<T>(definition: KeyDefinition<T>): KeyChecker {
  const { key, strategiesField } = definition;
  const root = valueRoot(key);
  const listPath = root.child(strategiesField);
  const strategiesIn = (config: T | undefined, errors: FieldError[]): NodeStrategy[] | undefined =>
    config === undefined ? [] : nodeStrategiesOf(definition.strategies(config) ?? [], listPath, errors);
  return {
    key,
    strategiesField,
    check(text, context) {
      const report: Required<DecodeReport> = { tagErrors: [], unknownFields: [] };
      const decoded = decode(definition, text, report);
      if (!decoded.ok) return { problems: decoded.error };
      const config = decoded.value;
      const unknownFields = report.unknownFields.map((path) => path.toString());
      const errors: FieldError[] = [];
      const strategies = strategiesIn(config, errors);
      errors.push(...report.tagErrors);
      if (config !== undefined && definition.ownProblems) {
        errors.push(...definition.ownProblems(config, root, context));
      }
      const search = strategies ? searchOverlaps(strategies) : { overlaps: [], exhausted: false };
      // The overlap messages name the strategies themselves, after the key.
      for (const overlap of search.overlaps) {
        errors.push(
          atField(
            keyPath(key),
            `${strategiesField} ${strategyList(overlap.strategies)} overlap: a node labelled ${labelsText(overlap.labels)} would match each of them; a node may match at most one (NodeStrategiesOverlap)`,
          ),
        );
      }
      // A config that cannot be proven free of overlaps in bounded time is not let through unproven.
      if (search.exhausted && search.overlaps.length === 0) {
        errors.push(
          atField(
            listPath,
            'too many node strategies share labels to check them for overlaps in bounded time; split or simplify their nodeSelectors (NodeStrategiesOverlap)',
          ),
        );
      }
      return {
        problems: errors,
        ...(unknownFields.length > 0 ? { unknownFields } : {}),
        ...(strategies ? { strategies } : {}),
      };
    },
    strategiesOf(text) {
      const decoded = decode(definition, text);
      return decoded.ok ? strategiesIn(decoded.value, []) : undefined;
    },
  };
}

/** system-config as resource-qos-config's network checks read it: absent, valid, or its first problem. */
function systemConfigFor(
  data: Readonly<Record<string, string>>,
): Result<SystemConfig | undefined, FieldError> {
  const text = data[SYSTEM_CONFIG_KEY] ?? '';
  if (text === '') return success(undefined);
  const decoded = decode(SYSTEM, text);
  return decoded.ok ? decoded : failure(decoded.error[0] ?? atField(keyPath(SYSTEM_CONFIG_KEY), 'invalid'));
}

const SYSTEM: KeyDefinition<SystemConfig> = {
  key: SYSTEM_CONFIG_KEY,
  decoder: SYSTEM_CONFIG,
  strategiesField: 'nodeStrategies',
  strategies: (config) => config.nodeStrategies,
};

function buildCheckers(maxAmplificationRatio: number | undefined): KeyChecker[] {
  return [
    checkerFor({
      key: 'colocation-config',
      decoder: COLOCATION_CONFIG,
      strategiesField: 'nodeConfigs',
      strategies: (config) => config.nodeConfigs,
    }),
    checkerFor({
      key: 'resource-threshold-config',
      decoder: RESOURCE_THRESHOLD_CONFIG,
      strategiesField: 'nodeStrategies',
      strategies: (config) => config.nodeStrategies,
    }),
    checkerFor({
      key: 'resource-qos-config',
      decoder: RESOURCE_QOS_CONFIG,
      strategiesField: 'nodeStrategies',
      strategies: (config) => config.nodeStrategies,
      ownProblems: (config, root, context) => {
        // Koordinator parses system-config along with resource-qos-config, so a resource-qos change
        // is refused while system-config is invalid. An absent or empty system-config is not refused
        // here (Koordinator does, only because "" is not JSON): there is then no total to check against.
        const system = systemConfigFor(context.data);
        if (!system.ok) {
          // A changed system-config reports its own problems; an unchanged one is named here.
          return context.checked(SYSTEM_CONFIG_KEY)
            ? []
            : [
                atField(
                  keyPath('resource-qos-config'),
                  `the network QoS settings are checked against data[${SYSTEM_CONFIG_KEY}], which must be valid: ${system.error.toString()}`,
                ),
              ];
        }
        return networkQosProblems(config, system.value, root);
      },
    }),
    checkerFor(SYSTEM),
    checkerFor({
      key: 'cpu-burst-config',
      decoder: CPU_BURST_CONFIG,
      strategiesField: 'nodeStrategies',
      strategies: (config) => config.nodeStrategies,
    }),
    checkerFor({
      key: 'host-application-config',
      decoder: HOST_APPLICATION_CONFIG,
      strategiesField: 'nodeConfigs',
      strategies: (config) => config.nodeConfigs,
      ownProblems: hostApplicationProblems,
    }),
    checkerFor({
      key: 'cpu-normalization-config',
      decoder: CPU_NORMALIZATION_CONFIG,
      strategiesField: 'nodeConfigs',
      strategies: (config) => config.nodeConfigs,
    }),
    checkerFor({
      key: 'resource-amplification-config',
      decoder: resourceAmplificationConfig(maxAmplificationRatio),
      strategiesField: 'nodeConfigs',
      strategies: (config) => config.nodeConfigs,
      ownProblems: resourceAmplificationProblems,
    }),
  ];
}

const built = new Map<number | undefined, KeyChecker[]>();

/**
 * The checkers in Koordinator's order (colocation, resource-threshold, resource-qos, system,
 * cpu-burst), then the three keys it leaves unchecked.
 */
export function sloConfigCheckers(maxAmplificationRatio?: number): readonly KeyChecker[] {
  let checkers = built.get(maxAmplificationRatio);
  if (!checkers) {
    checkers = buildCheckers(maxAmplificationRatio);
    built.set(maxAmplificationRatio, checkers);
  }
  return checkers;
}
