/**
 * /validate/modelbooster: Kthena v1.0.0's ModelBooster validator
 * (`pkg/model-booster-controller/webhook/model_validator.go`). Three rules, all run, every error
 * reported in Kthena's order: the backend's replica bound, the workers' images, the worker types
 * the backend type allows.
 */
import type { Rule } from '../../../state.js';
import { decisionOf, findings, PASSED } from '../../shared/findings.js';
import { type FieldError, FieldPath, invalid } from '../../shared/field-errors.js';
import { decodeFailed, validationFailed } from '../denials.js';
import { marshalledString } from '../go-values.js';
import { type ModelBooster, decodeModelBooster } from '../types/workload.js';
import { imageErrors, workerTypeErrors } from '../worker-checks.js';

const MAX_TOTAL_REPLICAS = 1_000_000;
const BACKEND = FieldPath.of('spec', 'backend');

function replicaBoundErrors(booster: ModelBooster): FieldError[] {
  const replicas = booster.spec?.backend?.replicas ?? 0;
  if (replicas <= MAX_TOTAL_REPLICAS) return [];
  return [
    invalid(
      BACKEND.child('replicas'),
      replicas,
      `replicas (${replicas}) cannot exceed ${MAX_TOTAL_REPLICAS}`,
    ),
  ];
}

function workerImageErrors(booster: ModelBooster): FieldError[] {
  return (booster.spec?.backend?.workers ?? []).flatMap((worker, j) =>
    imageErrors(BACKEND.child('workers').index(j).child('image'), worker.image),
  );
}

function backendWorkerTypeErrors(booster: ModelBooster): FieldError[] {
  const backend = booster.spec?.backend;
  return workerTypeErrors(
    backend?.type ?? '',
    (backend?.workers ?? []).map((worker) => worker.type ?? ''),
    BACKEND.child('workers'),
    // ModelWorkerType is a named string type: apimachinery shows it JSON-marshalled.
    marshalledString,
  );
}

export const validateModelBooster: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeModelBooster(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
  const booster = decoded.value;
  return decisionOf(
    findings([
      ...replicaBoundErrors(booster),
      ...workerImageErrors(booster),
      ...backendWorkerTypeErrors(booster),
    ]),
    validationFailed,
  );
};
