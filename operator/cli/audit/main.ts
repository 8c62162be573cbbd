/**
 * `admission-operator audit`: reads the cluster once, read-only (the state through the operator's
 * own store, the audited objects a page at a time), and lists the existing objects today's rules
 * would refuse or change, grouped by webhook and namespace. Exit 0: nothing would be refused;
 * 1: something would; 2: a usage error or a cluster that cannot be read.
 */
import { parseArgs } from 'node:util';
import { pino, type Logger } from 'pino';
import { OperatorMetrics } from '../../../webhook/metrics/operator-metrics.js';
import { truncate } from '../../../webhook/util/bounded-text.js';
import { runAudit } from '../../audit/audit.js';
import { versionLine } from '../../version.js';
import { formatAuditJson, formatAuditText } from '../../audit/format.js';
import { TABLE_FLAG_OPTIONS, tableFlagsOf, UsageError } from '../admit/args.js';
import { chainContextFactory, configMapsOf } from '../admit/chain-context.js';
import type { AdmitIo } from '../admit/main.js';
import { loadState, StateError } from '../admit/state.js';

export function auditUsage(): string {
  return `Usage: admission-operator audit [flags]

Lists the existing objects of a cluster (pods, nodes, ElasticQuotas, Models, AutoscalingPolicies and
Bindings, the operator's ConfigMaps) that the operator's webhooks would refuse or change if they
were created now, grouped by webhook and namespace. Read-only. Exit 0: nothing would be refused;
1: something would; 2: bad usage or a cluster that cannot be read.

Flags:
      --kubeconfig PATH        kubeconfig (default: $KUBECONFIG, ~/.kube/config)
      --context NAME           kubeconfig context
  -o, --output FORMAT          text (default) or json
      --feature-gates, --webhook-overrides, --operator-namespace, --slo-config-namespace,
      --excluded-namespaces, --max-amplification-ratio
                               as the operator's flags (and read from the same ADMISSION_* variables)`;
}

function quietLogger(io: AdmitIo): Logger {
  return pino(
    { level: 'error', base: null, timestamp: false },
    {
      write: (line: string) => {
        io.stderr(`audit: ${truncate(line.trim(), 1024)}\n`);
      },
    },
  );
}

export async function auditMain(argv: readonly string[], io: AdmitIo): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        output: { type: 'string', short: 'o' },
        ...TABLE_FLAG_OPTIONS,
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (error) {
    io.stderr(`audit: ${(error as Error).message}\n\n${auditUsage()}\n`);
    return 2;
  }
  if (values.help || values.version) {
    io.stdout(`${values.help ? auditUsage() : versionLine()}\n`);
    return 0;
  }
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    io.stderr(`audit: -o: must be text or json (got ${JSON.stringify(output)})\n`);
    return 2;
  }
  let flags;
  try {
    flags = tableFlagsOf(values, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`audit: ${error.message}\n`);
    return 2;
  }
  const logger = quietLogger(io);
  const metrics = new OperatorMetrics();
  try {
    const configMaps = configMapsOf(flags);
    const state = await loadState({
      files: [],
      cluster: { kubeconfig: values.kubeconfig, context: values.context },
      configMaps,
      operatorNamespace: flags.operatorNamespace,
      logger,
      metrics,
    });
    const report = await runAudit({
      kubeConfig: state.kubeConfig,
      store: state.store,
      chainContext: chainContextFactory(flags, state.store, logger, metrics),
      configMaps,
    });
    io.stdout(output === 'json' ? formatAuditJson(report) : formatAuditText(report));
    return report.findings.some((finding) => finding.outcome === 'refused') ? 1 : 0;
  } catch (error) {
    const message = truncate(error instanceof Error ? error.message : String(error), 1024);
    io.stderr(`audit: ${error instanceof StateError ? '' : 'cannot read the cluster: '}${message}\n`);
    return 2;
  }
}
