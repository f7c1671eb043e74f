package io.tidelog.operator;

import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.cluster.ClusterModel;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How the operator runs.
 *
 * @param controllers which reconcilers run: all by default; the Topic and User reconcilers alone
 *     serve Clusters whose brokers run elsewhere
 * @param leaseNamespace the operator's namespace, where the leader-election Lease lives and whose
 *     operator pods the brokers' NetworkPolicy lets in; null runs without leader election (one
 *     replica only) and lets the operator's pods in from any namespace
 * @param identity this replica's name in the Lease, such as its pod's name
 * @param exitWhenLeadershipLost whether the process exits when it loses the Lease, so that
 *     Kubernetes restarts it as a candidate again (in production); tests run in-process and do not
 * @param httpPort the port of /healthz, /readyz and /metrics; 0 picks a free one
 * @param topicReleaseAfter how long a deleted Topic waits for an unreachable cluster
 * @param stuckAfter how long a resource may stay not Ready before the metrics count it as stuck
 * @param brokerAccess how the reconcilers reach a Cluster's brokers (to check that a restart is
 *     safe, to manage topics): in Kubernetes, the replication listener with the operator's
 *     certificate
 * @param watchNamespaces the namespaces whose Clusters and Topics the operator serves, and whose
 *     objects it reads and writes; empty serves every namespace
 * @param secretPropagation how long the kubelet may take to update a mounted Secret (its sync
 *     period and its cache's): each step of a CA's renewal lasts at least this long
 */
public record OperatorSettings(
    Set<Controller> controllers,
    String leaseNamespace,
    String identity,
    boolean exitWhenLeadershipLost,
    int httpPort,
    Duration topicReleaseAfter,
    Duration stuckAfter,
    BrokerAccess.Resolver brokerAccess,
    Set<String> watchNamespaces,
    Duration secretPropagation) {

  public OperatorSettings {
    watchNamespaces = Set.copyOf(watchNamespaces);
  }

  /** A reconciler. */
  public enum Controller {
    CLUSTER,
    TOPIC,
    USER
  }

  /** From the environment of the operator's pod (see the Helm chart). */
  static OperatorSettings fromEnvironment() {
    var env = System.getenv();
    return new OperatorSettings(
        Arrays.stream(
                env.getOrDefault("TIDELOG_OPERATOR_CONTROLLERS", "cluster,topic,user").split(","))
            .map(name -> Controller.valueOf(name.strip().toUpperCase(Locale.ROOT)))
            .collect(Collectors.toCollection(() -> EnumSet.noneOf(Controller.class))),
        env.get("TIDELOG_OPERATOR_NAMESPACE"),
        env.getOrDefault("HOSTNAME", "tidelog-operator"),
        true,
        Integer.parseInt(env.getOrDefault("TIDELOG_OPERATOR_HTTP_PORT", "8080")),
        Duration.ofSeconds(
            Long.parseLong(env.getOrDefault("TIDELOG_TOPIC_RELEASE_AFTER_SECONDS", "300"))),
        Duration.ofSeconds(
            Long.parseLong(env.getOrDefault("TIDELOG_OPERATOR_STUCK_AFTER_SECONDS", "600"))),
        (cluster, client) ->
            BrokerAccess.inKubernetes(
                cluster,
                client,
                cluster.getStatus() != null && cluster.getStatus().bootstrapServers != null
                    ? cluster.getStatus().bootstrapServers
                    : ClusterModel.bootstrapServers(cluster)),
        Arrays.stream(env.getOrDefault("TIDELOG_OPERATOR_WATCH_NAMESPACES", "").split(","))
            .map(String::strip)
            .filter(ns -> !ns.isEmpty())
            .collect(Collectors.toSet()),
        Duration.ofSeconds(
            Long.parseLong(
                env.getOrDefault("TIDELOG_OPERATOR_SECRET_PROPAGATION_SECONDS", "180"))));
  }

  /** These settings, serving only {@code namespaces}. */
  public OperatorSettings watching(Set<String> namespaces) {
    return new OperatorSettings(
        controllers,
        leaseNamespace,
        identity,
        exitWhenLeadershipLost,
        httpPort,
        topicReleaseAfter,
        stuckAfter,
        brokerAccess,
        namespaces,
        secretPropagation);
  }
}
