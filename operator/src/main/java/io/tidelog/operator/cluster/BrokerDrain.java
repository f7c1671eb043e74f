package io.tidelog.operator.cluster;

import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.brokers.ReplicaPlacement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Empties the brokers that a scale-down removes before the StatefulSet shrinks: each partition
 * replica on them moves to a broker that stays ({@link ReplicaPlacement}), through
 * AlterPartitionReassignments, throttled as {@code kafka-reassign-partitions --throttle} does (each
 * moved topic's {@code leader.replication.throttled.replicas} and {@code
 * follower.replication.throttled.replicas} name the moving replicas; the rates are the brokers'
 * throttle rates, the Cluster's {@code spec.config}). A reassignment only drops a replica once its
 * target is in the ISR, so no partition goes below {@code min.insync.replicas} on the way. One step
 * per reconcile; the topics it throttled are kept in the Cluster's status, so that the throttles go
 * once the moves are done.
 */
final class BrokerDrain {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final List<String> THROTTLES =
      List.of("leader.replication.throttled.replicas", "follower.replication.throttled.replicas");

  private BrokerDrain() {}

  /**
   * Where the drain stands after one step.
   *
   * @param message what it is doing, for the Reconciling condition; empty once the brokers are
   *     empty and the throttles gone
   * @param started how many partitions this step started moving, for an Event
   * @param throttledTopics the topics whose throttles are set, for the status
   */
  record Step(Optional<String> message, int started, List<String> throttledTopics) {}

  static Step step(
      BrokerAccess access, BrokerView view, Set<Integer> removed, List<String> throttledTopics)
      throws Exception {
    try (Admin admin = access.newAdmin(TIMEOUT, TIMEOUT)) {
      Map<TopicPartition, PartitionReassignment> moving =
          admin.listPartitionReassignments().reassignments().get(seconds(), TimeUnit.SECONDS);
      List<BrokerView.PartitionView> hosted =
          view.partitions().stream()
              .filter(p -> p.replicas().stream().anyMatch(removed::contains))
              .toList();
      if (!moving.isEmpty()) {
        return new Step(
            Optional.of(
                "moving %d partition(s) off brokers %s before removing them (%d to go)"
                    .formatted(moving.size(), removed, hosted.size())),
            0,
            throttledTopics);
      }
      if (hosted.isEmpty()) {
        unthrottle(admin, throttledTopics);
        return new Step(Optional.empty(), 0, List.of());
      }
      Collection<Node> brokers = admin.describeCluster().nodes().get(seconds(), TimeUnit.SECONDS);
      List<Integer> staying =
          brokers.stream().map(Node::id).filter(id -> !removed.contains(id)).sorted().toList();
      ReplicaPlacement placement =
          new ReplicaPlacement(
              brokers, view.partitions().stream().map(BrokerView.PartitionView::replicas).toList());
      Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
      Map<String, Map<String, List<String>>> throttles = new TreeMap<>();
      for (BrokerView.PartitionView p : hosted) {
        List<Integer> kept = p.replicas().stream().filter(r -> !removed.contains(r)).toList();
        List<Integer> target = placement.extend(p.replicas(), kept, p.replicas().size(), staying);
        TopicPartition tp = p.topicPartition();
        moves.put(tp, Optional.of(new NewPartitionReassignment(target)));
        Map<String, List<String>> topic =
            throttles.computeIfAbsent(tp.topic(), t -> new TreeMap<>());
        p.replicas()
            .forEach(
                r ->
                    topic
                        .computeIfAbsent(THROTTLES.get(0), k -> new ArrayList<>())
                        .add(tp.partition() + ":" + r));
        target.stream()
            .filter(r -> !p.replicas().contains(r))
            .forEach(
                r ->
                    topic
                        .computeIfAbsent(THROTTLES.get(1), k -> new ArrayList<>())
                        .add(tp.partition() + ":" + r));
      }
      Set<String> throttled = new TreeSet<>(throttledTopics);
      throttled.addAll(throttles.keySet());
      Map<ConfigResource, Collection<AlterConfigOp>> configs = new HashMap<>();
      throttles.forEach(
          (topic, values) ->
              configs.put(
                  new ConfigResource(ConfigResource.Type.TOPIC, topic),
                  values.entrySet().stream()
                      .map(
                          e ->
                              new AlterConfigOp(
                                  new ConfigEntry(e.getKey(), String.join(",", e.getValue())),
                                  AlterConfigOp.OpType.SET))
                      .toList()));
      admin.incrementalAlterConfigs(configs).all().get(seconds(), TimeUnit.SECONDS);
      admin.alterPartitionReassignments(moves).all().get(seconds(), TimeUnit.SECONDS);
      return new Step(
          Optional.of(
              "moving %d partition(s) off brokers %s before removing them"
                  .formatted(moves.size(), removed)),
          moves.size(),
          List.copyOf(throttled));
    }
  }

  /** Removes the throttles of the topics that had them, those deleted meanwhile aside. */
  private static void unthrottle(Admin admin, List<String> topics) throws Exception {
    if (topics.isEmpty()) {
      return;
    }
    Set<String> existing = admin.listTopics().names().get(seconds(), TimeUnit.SECONDS);
    Map<ConfigResource, Collection<AlterConfigOp>> configs = new HashMap<>();
    topics.stream()
        .filter(existing::contains)
        .forEach(
            topic ->
                configs.put(
                    new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    THROTTLES.stream()
                        .map(
                            key ->
                                new AlterConfigOp(
                                    new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE))
                        .toList()));
    admin.incrementalAlterConfigs(configs).all().get(seconds(), TimeUnit.SECONDS);
  }

  private static long seconds() {
    return TIMEOUT.toSeconds() + 5;
  }
}
