#!/bin/sh
# Helm post-renderer for the upstream charts the end-to-end suite installs on the local node: the
# node has no registry, so an image imported into its containerd must not be pulled. Koordinator's
# chart hard-codes `imagePullPolicy: Always`; this changes that field alone, and nothing else.
exec sed 's/imagePullPolicy: Always$/imagePullPolicy: IfNotPresent/'
