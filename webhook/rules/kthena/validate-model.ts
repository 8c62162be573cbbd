/**
 * /validate-registry-volcano-sh-v1alpha1-model: Kthena's Model validator (registry webhook,
 * kthena e4fb6663). Every rule runs and every error is reported, in Kthena's order; field paths
 * keep Kthena's legacy names (`spec.backends[i].cost`, `spec.autoscalingPolicyRef`) because users
 * migrating from Kthena know the messages by them.
 */
import { formatGoDuration } from '../../util/go-duration.js';
import type { Rule } from '../../state.js';
import { decisionOf, type Findings, findings, PASSED } from '../shared/findings.js';
import { type FieldError, FieldPath, forbidden, invalid, required } from '../shared/field-errors.js';
import { decodeFailed, validationFailed } from './denials.js';
import { type Model, type ModelBackend, decodeModel } from './model-types.js';
import { imageErrors, workerTypeErrors } from './worker-checks.js';

const MAX_SCALE_TO_ZERO_MS = 1800 * 1000;
const MAX_TOTAL_REPLICAS = 1_000_000;

const backendPath = (index: number): FieldPath => FieldPath.of('spec', 'backends').index(index);
const backendsOf = (model: Model): ModelBackend[] => model.spec?.backends ?? [];

function scaleToZeroGracePeriodErrors(model: Model): FieldError[] {
  const errors: FieldError[] = [];
  backendsOf(model).forEach((backend, index) => {
    const period = backend.scaleToZeroGracePeriod;
    if (period === undefined) return;
    const path = backendPath(index).child('scaleToZeroGracePeriod');
    // Kthena passes d.String() as a Go string, so the value is quoted: "31m0s".
    const shown = formatGoDuration(period.ms);
    if (period.ms > MAX_SCALE_TO_ZERO_MS) {
      errors.push(invalid(path, shown, 'scaleToZeroGracePeriod cannot exceed 1800 seconds'));
    }
    if (period.ms < 0) errors.push(invalid(path, shown, 'scaleToZeroGracePeriod cannot be negative'));
  });
  return errors;
}

function replicaBoundErrors(model: Model): FieldError[] {
  const errors: FieldError[] = [];
  let total = 0;
  backendsOf(model).forEach((backend, index) => {
    const min = backend.minReplicas ?? 0;
    const max = backend.maxReplicas ?? 0;
    if (min > max) {
      errors.push(
        invalid(
          backendPath(index).child('minReplicas'),
          min,
          'minReplicas cannot be greater than maxReplicas',
        ),
      );
    }
    total += max;
  });
  // Kthena sums in int32, so past 2^31-1 the sum wraps (negative) and the check passes; the true
  // sum is what the limit is about.
  if (total > MAX_TOTAL_REPLICAS) {
    errors.push(
      invalid(
        FieldPath.of('spec', 'backends'),
        total,
        `sum of maxReplicas across all backends (${total}) cannot exceed ${MAX_TOTAL_REPLICAS}`,
      ),
    );
  }
  return errors;
}

function workerImageErrors(model: Model): FieldError[] {
  return backendsOf(model).flatMap((backend, i) =>
    (backend.workers ?? []).flatMap((worker, j) =>
      imageErrors(backendPath(i).child('workers').index(j).child('image'), worker.image),
    ),
  );
}

function autoscalingScopeErrors(model: Model): FieldError[] {
  const errors: FieldError[] = [];
  const backends = backendsOf(model);
  const modelLevel = model.spec?.autoscalingPolicy !== undefined;
  const anyBackendLevel = backends.some((backend) => backend.autoscalingPolicy !== undefined);

  if (modelLevel && anyBackendLevel) {
    return [
      forbidden(
        FieldPath.of('spec', 'autoscalingPolicyRef'),
        'spec.autoscalingPolicyRef and spec.backends[].autoscalingPolicyRef cannot both be set; choose model-level or backend-level autoscaling, not both',
      ),
    ];
  }

  if (modelLevel) {
    let minSum = 0;
    backends.forEach((backend, index) => {
      const min = backend.minReplicas ?? 0;
      if (min < 0) {
        errors.push(
          invalid(
            backendPath(index).child('minReplicas'),
            min,
            'minReplicas must be >= 0 when model-level autoscaling is set',
          ),
        );
      }
      // Exact, where Kthena's int32 sum could wrap.
      minSum += min;
      if ((backend.scalingCost ?? 0) === 0) {
        errors.push(
          required(
            backendPath(index).child('cost'),
            'cost must be provided when model-level autoscaling is set',
          ),
        );
      }
      if (backend.scaleToZeroGracePeriod === undefined) {
        errors.push(
          required(
            backendPath(index).child('scaleToZeroGracePeriod'),
            'scaleToZeroGracePeriod must be provided when model-level autoscaling is set',
          ),
        );
      }
    });
    if (minSum < 1) {
      errors.push(
        invalid(
          FieldPath.of('spec', 'backends'),
          minSum,
          'sum of all minReplicas must be >= 1 when model-level autoscaling is set',
        ),
      );
    }
    if (model.spec?.costExpansionRatePercent === undefined) {
      errors.push(
        required(
          FieldPath.of('spec', 'costExpansionRatePercent'),
          'costExpansionRatePercent must be provided and > 0 when model-level autoscaling is set',
        ),
      );
    }
    return errors;
  }

  backends.forEach((backend, index) => {
    if ((backend.scalingCost ?? 0) !== 0) {
      errors.push(
        forbidden(
          backendPath(index).child('cost'),
          'cost must not be provided when model-level autoscaling is not set',
        ),
      );
    }
    if (backend.scaleToZeroGracePeriod !== undefined) {
      errors.push(
        forbidden(
          backendPath(index).child('scaleToZeroGracePeriod'),
          'scaleToZeroGracePeriod must not be provided when model-level autoscaling is not set',
        ),
      );
    }
  });
  if (model.spec?.costExpansionRatePercent !== undefined) {
    errors.push(
      forbidden(
        FieldPath.of('spec', 'costExpansionRatePercent'),
        'costExpansionRatePercent must not be provided when model-level autoscaling is not set',
      ),
    );
  }
  backends.forEach((backend, index) => {
    const min = backend.minReplicas ?? 0;
    if (backend.autoscalingPolicy !== undefined && min < 1) {
      errors.push(
        invalid(
          backendPath(index).child('minReplicas'),
          min,
          'minReplicas must be >= 1 when backend-level autoscaling is set',
        ),
      );
    }
  });
  // Without any autoscaling a backend runs a fixed count. Once some backend autoscales, the others
  // are left alone (Kthena allows such mixed models).
  if (!anyBackendLevel) {
    backends.forEach((backend, index) => {
      const min = backend.minReplicas ?? 0;
      const max = backend.maxReplicas ?? 0;
      if (min !== max) {
        errors.push(
          invalid(
            backendPath(index),
            `minReplicas=${min}, maxReplicas=${max}`,
            'minReplicas and maxReplicas must be equal and > 0 when no autoscaling is set',
          ),
        );
      }
    });
  }
  return errors;
}

function modelWorkerTypeErrors(model: Model): FieldError[] {
  return backendsOf(model).flatMap((backend, i) =>
    workerTypeErrors(
      backend.type ?? '',
      (backend.workers ?? []).map((worker) => worker.type ?? ''),
      backendPath(i).child('workers'),
      (type) => type,
    ),
  );
}

function loraAdapterErrors(model: Model): FieldError[] {
  const errors: FieldError[] = [];
  // The object's name, not spec.name; with generateName it may still be empty here.
  const modelName = model.metadata?.name ?? '';
  backendsOf(model).forEach((backend, i) => {
    const seen = new Set<string>();
    (backend.loraAdapters ?? []).forEach((adapter, j) => {
      const name = adapter.name ?? '';
      const path = backendPath(i).child('loraAdapters').index(j).child('name');
      if (name === modelName) errors.push(invalid(path, name, 'lora name cannot be the same as model name'));
      if (seen.has(name)) errors.push(invalid(path, name, 'lora name must be unique within the backend'));
      seen.add(name);
    });
  });
  return errors;
}

/** Kthena's rules, in Kthena's order. */
const RULES: readonly ((model: Model) => FieldError[])[] = [
  scaleToZeroGracePeriodErrors,
  replicaBoundErrors,
  workerImageErrors,
  autoscalingScopeErrors,
  modelWorkerTypeErrors,
  loraAdapterErrors,
];

function checkModel(model: Model): Findings {
  return findings(RULES.flatMap((rule) => rule(model)));
}

export const validateModel: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeModel(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
  return decisionOf(checkModel(decoded.value), validationFailed);
};
