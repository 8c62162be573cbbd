/**
 * Every webhook's folder, in the table's order (the order of both configurations' webhooks and
 * of the mutating chain). A new webhook is one import and one name below.
 */
import { webhook as mutatePod } from './mutate-pod/index.js';
import { webhook as mutateNodeStatus } from './mutate-node-status/index.js';
import { webhook as mutateElasticQuota } from './mutate-elasticquota/index.js';
import { webhook as mutateReservation } from './mutate-reservation/index.js';
import { webhook as validatePod } from './validate-pod/index.js';
import { webhook as validatePodResize } from './validate-pod-resize/index.js';
import { webhook as validateNode } from './validate-node/index.js';
import { webhook as validateElasticQuota } from './validate-elasticquota/index.js';
import { webhook as validateConfigMap } from './validate-configmap/index.js';
import { webhook as mutatePodGpuClass } from './mutate-pod-gpu-class/index.js';
import { webhook as mutateModelBooster } from './mutate-modelbooster/index.js';
import { webhook as mutateAutoscalingPolicy } from './mutate-autoscalingpolicy/index.js';
import { webhook as validateModelBooster } from './validate-modelbooster/index.js';
import { webhook as validateAutoscalingPolicy } from './validate-autoscalingpolicy/index.js';
import { webhook as validateModelServing } from './validate-modelserving/index.js';
import { webhook as validateModelRoute } from './validate-modelroute/index.js';
import { webhook as validateModelServer } from './validate-modelserver/index.js';

export const WEBHOOKS = [
  // Koordinator: pods, nodes, quotas, reservations, the SLO ConfigMap.
  mutatePod,
  mutateNodeStatus,
  mutateElasticQuota,
  mutateReservation,
  validatePod,
  validatePodResize,
  validateNode,
  validateElasticQuota,
  validateConfigMap,
  // KubeNexus: tenant tier -> GPU class.
  mutatePodGpuClass,
  // Kthena v1.0.0.
  mutateModelBooster,
  mutateAutoscalingPolicy,
  validateModelBooster,
  validateAutoscalingPolicy,
  validateModelServing,
  validateModelRoute,
  validateModelServer,
] as const;
