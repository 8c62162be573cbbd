/**
 * Reads the chart's alert rules and dashboard (charts/admission-operator/files/) and the metric
 * names their expressions use, for the unit and integration tests that check them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../scripts/cluster/layout.js';

export const monitoringFiles = join(repoRoot, 'charts', 'admission-operator', 'files');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface Dashboard {
  uid?: string;
  title?: string;
  panels?: DashboardPanel[];
  templating?: { list?: { name: string }[] };
}

export interface DashboardPanel {
  id?: number;
  type?: string;
  title?: string;
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

export async function readAlertsFile(): Promise<unknown> {
  return parse(await readFile(join(monitoringFiles, 'alerts.yaml'), 'utf8')) as unknown;
}

export async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await readFile(join(monitoringFiles, 'dashboard.json'), 'utf8')) as Dashboard;
}

/** The alerting rules of a rule file's `groups` (recording rules are skipped). */
export function alertRules(file: unknown): AlertRule[] {
  const groups = (file as { groups?: { rules?: Partial<AlertRule>[] }[] }).groups ?? [];
  return groups
    .flatMap((group) => group.rules ?? [])
    .filter((rule): rule is Partial<AlertRule> & { alert: string } => typeof rule.alert === 'string')
    .map((rule) => ({
      alert: rule.alert,
      expr: rule.expr ?? '',
      ...(rule.for === undefined ? {} : { for: rule.for }),
      labels: rule.labels ?? {},
      annotations: rule.annotations ?? {},
    }));
}

export function dashboardPanels(dashboard: Dashboard): DashboardPanel[] {
  const all: DashboardPanel[] = [];
  const visit = (panels: DashboardPanel[] | undefined): void => {
    for (const panel of panels ?? []) {
      all.push(panel);
      visit(panel.panels);
    }
  };
  visit(dashboard.panels);
  return all;
}

export function dashboardExpressions(dashboard: Dashboard): string[] {
  return dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => target.expr ?? '').filter((expr) => expr !== ''),
  );
}

/**
 * The metric names a PromQL expression selects. Every selector in these files carries a label
 * matcher (the job), so a metric name is an identifier right before `{`.
 */
export function metricNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((match) => match[1] ?? ''))];
}
