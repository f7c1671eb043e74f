/**
 * The {@link io.tidelog.operator.api.Cluster} reconciler. {@link
 * io.tidelog.operator.cluster.ClusterModel} turns a Cluster into the Kubernetes objects it should
 * have (pure functions, no client calls); {@link io.tidelog.operator.cluster.ClusterReconciler}
 * checks the spec, applies those objects, and rolls broker pods one at a time ({@link
 * io.tidelog.operator.cluster.Roller}), asking the brokers through kafka-clients' Admin whether a
 * restart is safe.
 */
package io.tidelog.operator.cluster;
