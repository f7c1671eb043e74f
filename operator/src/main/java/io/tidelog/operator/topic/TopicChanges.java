package io.tidelog.operator.topic;

import io.tidelog.operator.api.TopicSpec;
import io.tidelog.operator.brokers.ReassignmentThrottles;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Brings a Kafka topic to what its spec declares. Everything that would be refused is checked
 * before anything changes, so a refused spec changes nothing.
 */
final class TopicChanges {
  /** A spec that the operator will not apply; the reason is the condition's reason. */
  static final class Refused extends Exception {
    final String reason;

    Refused(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  /** A spec that is being applied by moving replicas: neither refused nor done yet. */
  static final class Moving extends Exception {
    Moving(String message) {
      super(message);
    }
  }

  private static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

  private TopicChanges() {}

  static TopicState create(TopicAdmin admin, String name, TopicSpec spec) throws Exception {
    NewTopic topic =
        new NewTopic(
                name,
                Optional.ofNullable(spec.partitions),
                Optional.ofNullable(spec.replicas).map(Integer::shortValue))
            .configs(spec.config == null ? Map.of() : spec.config);
    try {
      return admin.create(topic);
    } catch (ApiException e) {
      throw refusedUnlessRetriable("spec", e);
    }
  }

  static TopicState update(TopicAdmin admin, String name, TopicSpec spec, TopicDescription current)
      throws Exception {
    TopicState state = TopicState.of(current);
    if (spec.partitions != null && spec.partitions < state.partitions()) {
      throw new Refused(
          "NotSupported",
          "spec.partitions: cannot decrease from %d to %d; a Kafka topic cannot lose partitions"
              .formatted(state.partitions(), spec.partitions));
    }
    Config config = admin.configs(name);
    Map<TopicPartition, PartitionReassignment> moving = Map.of();
    Map<Integer, List<Integer>> targets = Map.of();
    Map<String, String> own = dynamicConfigs(config);
    boolean held =
        ReassignmentThrottles.KEYS.stream()
            .anyMatch(key -> own.containsKey(key) && !declares(spec.config, key));
    boolean resize =
        spec.replicas != null
            && current.partitions().stream().anyMatch(p -> p.replicas().size() != spec.replicas);
    // A move the operator started (this reconciler's, or the Cluster's draining or balancing
    // brokers) has its throttles set; while it lasts, each partition's replicas are the target and
    // those it leaves, which may number the factor already, and the throttles stay.
    if (held || resize) {
      moving = admin.reassignments(name, current.partitions().size());
      if (moving.isEmpty() && resize) {
        // the spec's own value, which this reconciliation sets, else the topic's now
        int minIsr =
            Integer.parseInt(
                declares(spec.config, MIN_INSYNC_REPLICAS)
                    ? spec.config.get(MIN_INSYNC_REPLICAS)
                    : config.get(MIN_INSYNC_REPLICAS).value());
        if (spec.replicas < minIsr) {
          throw new Refused(
              "InvalidSpec",
              "spec.replicas: %d is below the topic's min.insync.replicas (%d): acks=all writes would fail"
                  .formatted(spec.replicas, minIsr));
        }
        targets =
            ReplicationFactorPlan.targets(current.partitions(), admin.brokers(), spec.replicas);
      }
    }
    boolean moves = !moving.isEmpty() || !targets.isEmpty();
    List<AlterConfigOp> changes =
        configChanges(spec.config, own, moves ? ReassignmentThrottles.KEYS : Set.of());
    changes.addAll(throttles(spec.config, current, targets));
    try {
      if (!changes.isEmpty()) {
        admin.alterConfigs(name, changes);
      }
    } catch (ApiException e) {
      throw refusedUnlessRetriable("spec.config", e);
    }
    if (spec.partitions != null && spec.partitions != state.partitions()) {
      try {
        admin.growPartitions(name, spec.partitions);
      } catch (ApiException e) {
        throw refusedUnlessRetriable("spec.partitions", e);
      }
      state = new TopicState(state.topicId(), spec.partitions, state.replicas());
    }
    if (!targets.isEmpty()) {
      try {
        admin.reassign(name, targets);
      } catch (ApiException e) {
        throw refusedUnlessRetriable("spec.replicas", e);
      }
      throw new Moving(
          "spec.replicas: moving %d partition(s) from %d to %d replicas"
              .formatted(targets.size(), state.replicas(), spec.replicas));
    }
    if (!moving.isEmpty()) {
      throw new Moving(
          "spec.replicas: %d partition(s) moving, adding %s, removing %s"
              .formatted(
                  moving.size(),
                  replicasOf(moving, PartitionReassignment::addingReplicas),
                  replicasOf(moving, PartitionReassignment::removingReplicas)));
    }
    return state;
  }

  /**
   * The topic configs that throttle a move the operator starts, as {@code kafka-reassign-partitions
   * --throttle} sets them: the leader side on each moving partition's current replicas, the
   * follower side on the replicas it adds. The rate is the brokers' {@code
   * leader.replication.throttled.rate} and {@code follower.replication.throttled.rate} (the
   * Cluster's {@code spec.config}); a topic that declares these configs itself keeps them.
   */
  private static List<AlterConfigOp> throttles(
      Map<String, String> declared, TopicDescription current, Map<Integer, List<Integer>> targets) {
    ReassignmentThrottles throttles = new ReassignmentThrottles();
    for (TopicPartitionInfo partition : current.partitions()) {
      List<Integer> target = targets.get(partition.partition());
      if (target != null) {
        throttles.add(
            partition.partition(), partition.replicas().stream().map(Node::id).toList(), target);
      }
    }
    List<AlterConfigOp> changes = new ArrayList<>();
    throttles
        .configs()
        .forEach(
            (key, value) -> {
              if (!declares(declared, key)) {
                changes.add(
                    new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
              }
            });
    return changes;
  }

  private static boolean declares(Map<String, String> declared, String key) {
    return declared != null && declared.containsKey(key);
  }

  private static String replicasOf(
      Map<TopicPartition, PartitionReassignment> moving,
      Function<PartitionReassignment, List<Integer>> side) {
    return new TreeSet<>(moving.values().stream().flatMap(m -> side.apply(m).stream()).toList())
        .toString();
  }

  /**
   * The changes that make a topic's own configs exactly {@code desired}: a key set to another value
   * is set, and a key set on the topic but no longer declared is deleted, back to the default,
   * unless the operator {@code held} it for a move in progress.
   */
  static List<AlterConfigOp> configChanges(
      Map<String, String> desired, Map<String, String> current, Set<String> held) {
    Map<String, String> wanted = desired == null ? Map.of() : new TreeMap<>(desired);
    List<AlterConfigOp> changes = new ArrayList<>();
    wanted.forEach(
        (key, value) -> {
          if (!value.equals(current.get(key))) {
            changes.add(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
          }
        });
    new TreeMap<>(current)
        .keySet().stream()
            .filter(key -> !wanted.containsKey(key) && !held.contains(key))
            .forEach(
                key ->
                    changes.add(
                        new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE)));
    return changes;
  }

  /** The configs set on the topic itself, as opposed to broker defaults. */
  private static Map<String, String> dynamicConfigs(Config config) {
    Map<String, String> own = new TreeMap<>();
    for (ConfigEntry entry : config.entries()) {
      if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
        own.put(entry.name(), entry.value());
      }
    }
    return own;
  }

  private static Exception refusedUnlessRetriable(String field, ApiException e) {
    return e instanceof RetriableException
        ? e
        : new Refused("InvalidSpec", field + ": " + e.getMessage());
  }
}
