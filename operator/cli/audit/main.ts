/**
 * `admission-operator audit`: reads the cluster once, read-only (the state through the operator's
 * own store, the audited objects a page at a time), and lists the existing objects today's rules
 * would refuse or change, grouped by webhook and namespace; with --policy-report, also writes them
 * as PolicyReports (the one write it makes). Exit 0: nothing would be refused; 1: something
 * would; 2: a usage error, a cluster that cannot be read, or reports that cannot be written.
 */
import { parseArgs } from 'node:util';
import { replaceResourcesCounted } from '../../../webhook/feature-gates.js';
import { pino, type Logger } from 'pino';
import { NO_DECISION_METRICS } from '../../../webhook/metrics/decision-metrics.js';
import { truncate } from '../../../webhook/util/bounded-text.js';
import { AuditIncomplete, runAudit } from '../../audit/audit.js';
import { IncompleteList } from '../../kube/paged-list.js';
import { DEFAULT_CHUNK_SIZE } from '../../audit/audited-objects.js';
import { versionLine } from '../../version.js';
import { formatAuditJson, formatAuditText, formatAuditYaml } from '../../audit/format.js';
import {
  ADMISSION_POLICY_REPORT_NAME,
  PolicyReportCollector,
  publishPolicyReports,
} from '../../audit/policy-report.js';
import type { AuditReport } from '../../audit/audit.js';
import { TABLE_FLAG_OPTIONS, tableFlagsOf, UsageError } from '../admit/args.js';
import { chainContextFactory } from '../../../webhook/chain/chain-context.js';
import { configMapsOf, tableContextOf } from '../admit/table-context.js';
import type { AdmitIo } from '../admit/main.js';
import { loadState, StateError } from '../admit/state.js';

function auditUsage(): string {
  return `Usage: admission-operator audit [flags]

Lists the existing objects of a cluster (pods, nodes, ElasticQuotas, Kthena's
ModelBoosters, AutoscalingPolicies, ModelServings, ModelRoutes and ModelServers, the operator's ConfigMaps) that the operator's webhooks would refuse or change if they
were created now, grouped by webhook and namespace. Read-only, unless --policy-report. Exit 0:
nothing would be refused; 1: something would; 2: bad usage, a cluster that cannot be read in
full (nothing is reported then), or reports that cannot be written.

Flags:
      --kubeconfig PATH        kubeconfig (default: $KUBECONFIG, ~/.kube/config)
      --context NAME           kubeconfig context
  -n, --namespace NAME         only the objects of this namespace (cluster-scoped ones left out)
  -A, --all-namespaces         every namespace and the cluster-scoped objects (the default; wins over -n)
  -l, --selector SELECTOR      only objects whose labels match, e.g. app=web,tier!=batch
  -o, --output FORMAT          text (default), json or yaml
      --chunk-size N           objects per list request, as kubectl's (default ${DEFAULT_CHUNK_SIZE})
      --policy-report          also write the results as wgpolicyk8s.io/v1alpha2 PolicyReports, one per
                               namespace (ClusterPolicyReport for cluster-scoped objects), named
                               ${ADMISSION_POLICY_REPORT_NAME}: a re-run replaces them (not with -l)
      --feature-gates, --webhook-overrides, --operator-namespace, --slo-config-namespace,
      --excluded-namespaces, --webhook-namespace-selector, --webhook-object-selector,
      --max-amplification-ratio
                               as the operator's flags (and read from the same ADMISSION_* variables)
  -h, --help                   show this help
      --version                print the version and the git commit of the build`;
}

const FORMATS: Record<'text' | 'json' | 'yaml', (report: AuditReport) => string> = {
  text: formatAuditText,
  json: formatAuditJson,
  yaml: formatAuditYaml,
};

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
        namespace: { type: 'string', short: 'n' },
        'all-namespaces': { type: 'boolean', short: 'A' },
        selector: { type: 'string', short: 'l' },
        output: { type: 'string', short: 'o' },
        'chunk-size': { type: 'string' },
        'policy-report': { type: 'boolean' },
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
  if (output !== 'text' && output !== 'json' && output !== 'yaml') {
    io.stderr(`audit: -o: must be text, json or yaml (got ${JSON.stringify(output)})\n`);
    return 2;
  }
  const chunkSize = values['chunk-size'] === undefined ? DEFAULT_CHUNK_SIZE : Number(values['chunk-size']);
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) {
    io.stderr(
      `audit: --chunk-size: must be a whole number above 0 (got ${JSON.stringify(values['chunk-size'])})\n`,
    );
    return 2;
  }
  // kubectl's -A: every namespace, whatever -n says.
  const namespace = values['all-namespaces'] ? undefined : values.namespace;
  if (namespace === '') {
    io.stderr('audit: -n: must name a namespace\n');
    return 2;
  }
  if (values['policy-report'] && values.selector !== undefined) {
    // A namespace's report stands for all of its objects; one of a selection would replace it with less.
    io.stderr('audit: --policy-report covers every object of a namespace: it cannot be used with -l\n');
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
  try {
    const configMaps = configMapsOf(flags);
    const state = await loadState({
      files: [],
      cluster: { kubeconfig: values.kubeconfig, context: values.context },
      configMaps,
      operatorNamespace: flags.operatorNamespace,
      logger,
      replaceResources: replaceResourcesCounted(flags.featureGates),
    });
    const collector = values['policy-report'] ? new PolicyReportCollector() : undefined;
    const report = await runAudit({
      kubeConfig: state.kubeConfig,
      store: state.store,
      chainContext: chainContextFactory(
        (mapping) => tableContextOf(flags, mapping),
        state.store,
        logger,
        NO_DECISION_METRICS,
      ),
      configMaps,
      scope: { namespace, labelSelector: values.selector },
      chunkSize,
      ...(collector ? { onJudged: collector.add } : {}),
    });
    io.stdout(FORMATS[output](report));
    if (collector) {
      try {
        const published = await publishPolicyReports(state.kubeConfig, collector.reports(), namespace);
        io.stderr(
          `audit: wrote ${published.written.length} policy reports${published.deleted.length > 0 ? `, deleted ${published.deleted.length} of an earlier run with nothing left to report` : ''}\n`,
        );
      } catch (error) {
        const message = truncate(error instanceof Error ? error.message : String(error), 1024);
        io.stderr(`audit: --policy-report: ${message}\n`);
        return 2;
      }
    }
    return report.findings.some((finding) => finding.outcome === 'refused') ? 1 : 0;
  } catch (error) {
    const message = truncate(error instanceof Error ? error.message : String(error), 1024);
    const why =
      error instanceof StateError
        ? ''
        : error instanceof AuditIncomplete || error instanceof IncompleteList
          ? 'the cluster could not be read in full, so nothing is reported: '
          : 'cannot read the cluster: ';
    io.stderr(`audit: ${why}${message}\n`);
    return 2;
  }
}
