package io.tidelog.operator.cluster;

import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.brokers.ReassignmentThrottles;
import java.time.Duration;
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
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Runs the operator's partition moves, a step per reconcile: while any reassignment is in progress
 * it waits; otherwise it asks its {@link Plan} for the next moves and starts them through
 * AlterPartitionReassignments, throttled as {@code kafka-reassign-partitions --throttle} does (each
 * moved topic's {@code leader.replication.throttled.replicas} names the moving partitions' replicas
 * and {@code follower.replication.throttled.replicas} the replicas they add; the rates are the
 * brokers' throttle rates, the Cluster's {@code spec.config}); when the plan has nothing left, it
 * removes the throttles. A reassignment drops a replica only once its target is in the ISR, so no
 * partition goes below {@code min.insync.replicas} on the way. The topics it throttled are kept in
 * the Cluster's status between steps.
 */
final class ReplicaMoves {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private ReplicaMoves() {}

  /** What to move next: each partition to its target replicas; none when it is done. */
  interface Plan {
    Map<TopicPartition, List<Integer>> targets(
        Collection<Node> brokers, List<BrokerView.PartitionView> partitions);
  }

  /**
   * Where the moves stand after one step.
   *
   * @param moving the partitions being moved (by this operator or anyone else): wait for them
   * @param started the partitions this step started moving
   * @param throttledTopics the topics whose throttles are set, for the status
   */
  record Step(int moving, int started, List<String> throttledTopics) {
    boolean done() {
      return moving == 0 && started == 0;
    }
  }

  static Step step(BrokerAccess access, BrokerView view, Plan plan, List<String> throttledTopics)
      throws Exception {
    try (Admin admin = access.newAdmin(TIMEOUT, TIMEOUT)) {
      int moving =
          admin
              .listPartitionReassignments()
              .reassignments()
              .get(seconds(), TimeUnit.SECONDS)
              .size();
      if (moving > 0) {
        return new Step(moving, 0, throttledTopics);
      }
      Collection<Node> brokers = admin.describeCluster().nodes().get(seconds(), TimeUnit.SECONDS);
      Map<TopicPartition, List<Integer>> targets = plan.targets(brokers, view.partitions());
      if (targets.isEmpty()) {
        unthrottle(admin, throttledTopics);
        return new Step(0, 0, List.of());
      }
      Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
      Map<String, ReassignmentThrottles> throttles = new TreeMap<>();
      for (BrokerView.PartitionView p : view.partitions()) {
        TopicPartition tp = p.topicPartition();
        List<Integer> target = targets.get(tp);
        if (target != null) {
          moves.put(tp, Optional.of(new NewPartitionReassignment(target)));
          throttles
              .computeIfAbsent(tp.topic(), t -> new ReassignmentThrottles())
              .add(tp.partition(), p.replicas(), target);
        }
      }
      Map<ConfigResource, Collection<AlterConfigOp>> configs = new HashMap<>();
      throttles.forEach(
          (topic, marks) ->
              configs.put(
                  new ConfigResource(ConfigResource.Type.TOPIC, topic),
                  marks.configs().entrySet().stream()
                      .map(
                          e ->
                              new AlterConfigOp(
                                  new ConfigEntry(e.getKey(), e.getValue()),
                                  AlterConfigOp.OpType.SET))
                      .toList()));
      admin.incrementalAlterConfigs(configs).all().get(seconds(), TimeUnit.SECONDS);
      admin.alterPartitionReassignments(moves).all().get(seconds(), TimeUnit.SECONDS);
      Set<String> throttled = new TreeSet<>(throttledTopics);
      throttled.addAll(throttles.keySet());
      return new Step(0, moves.size(), List.copyOf(throttled));
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
                    ReassignmentThrottles.KEYS.stream()
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
