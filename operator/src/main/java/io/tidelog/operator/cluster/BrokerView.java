package io.tidelog.operator.cluster;

import io.tidelog.operator.brokers.BrokerAccess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;

/**
 * What the brokers say of themselves, read once through kafka-clients' Admin: the active
 * controller, the live (registered) brokers, and every partition's replicas, ISR, {@code
 * min.insync.replicas}, the replicas a move in progress removes and its size. A snapshot; the
 * roller decides on it.
 */
record BrokerView(
    Optional<Integer> controllerId, Set<Integer> liveBrokers, List<PartitionView> partitions) {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /**
   * One partition: the brokers holding it, those in sync, how many must be, the replicas a move in
   * progress removes, and its size (its largest replica's, as DescribeLogDirs gives it).
   */
  record PartitionView(
      String name,
      List<Integer> replicas,
      Set<Integer> isr,
      int minIsr,
      List<Integer> removing,
      long sizeBytes) {
    /** A partition no reassignment is moving, of no known size. */
    PartitionView(String name, List<Integer> replicas, Set<Integer> isr, int minIsr) {
      this(name, replicas, isr, minIsr, List.of(), 0);
    }

    /** A partition of no known size. */
    PartitionView(
        String name, List<Integer> replicas, Set<Integer> isr, int minIsr, List<Integer> removing) {
      this(name, replicas, isr, minIsr, removing, 0);
    }

    /**
     * Its replicas once a move in progress is done: the replicas less those it removes that it
     * still has (a move that ended between the two reads left them already).
     */
    int replicationFactor() {
      return (int) replicas.stream().filter(r -> !removing.contains(r)).count();
    }

    /** The partition that {@code name} ({@code <topic>-<partition>}) names. */
    TopicPartition topicPartition() {
      int dash = name.lastIndexOf('-');
      return new TopicPartition(
          name.substring(0, dash), Integer.parseInt(name.substring(dash + 1)));
    }
  }

  /** The active controller's broker id, or empty when there is none. */
  static Optional<Integer> controller(BrokerAccess access) throws Exception {
    try (Admin admin = admin(access)) {
      return controllerOf(admin);
    }
  }

  private static Optional<Integer> controllerOf(Admin admin) throws Exception {
    Node controller =
        admin.describeCluster().controller().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    return controller == null || controller.isEmpty()
        ? Optional.empty()
        : Optional.of(controller.id());
  }

  private static Admin admin(BrokerAccess access) {
    return access.newAdmin(TIMEOUT, TIMEOUT);
  }

  static BrokerView read(BrokerAccess access) throws Exception {
    try (Admin admin = admin(access)) {
      Optional<Integer> controller = controllerOf(admin);
      Set<Integer> live =
          admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).stream()
              .map(Node::id)
              .collect(Collectors.toCollection(TreeSet::new));
      Set<String> names =
          admin
              .listTopics(new ListTopicsOptions().listInternal(true))
              .names()
              .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      // The moves first: one that ends before the topics are read shows there as done, never as a
      // partition with the replicas of both sides and none of them being removed
      Map<TopicPartition, PartitionReassignment> moving =
          admin
              .listPartitionReassignments()
              .reassignments()
              .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      Map<String, TopicDescription> topics =
          admin
              .describeTopics(names)
              .allTopicNames()
              .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      List<ConfigResource> resources =
          names.stream().map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList();
      Map<ConfigResource, Config> configs =
          admin.describeConfigs(resources).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      Map<TopicPartition, Long> sizes = new java.util.HashMap<>();
      admin
          .describeLogDirs(live)
          .allDescriptions()
          .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .values()
          .forEach(
              dirs ->
                  dirs.values()
                      .forEach(
                          dir ->
                              dir.replicaInfos()
                                  .forEach((tp, info) -> sizes.merge(tp, info.size(), Math::max))));
      List<PartitionView> partitions = new ArrayList<>();
      for (TopicDescription topic : topics.values()) {
        var minIsr =
            configs
                .get(new ConfigResource(ConfigResource.Type.TOPIC, topic.name()))
                .get(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
        int minIsrCount = minIsr == null ? 1 : Integer.parseInt(minIsr.value());
        for (TopicPartitionInfo p : topic.partitions()) {
          partitions.add(
              new PartitionView(
                  topic.name() + "-" + p.partition(),
                  p.replicas().stream().map(Node::id).toList(),
                  new TreeSet<>(p.isr().stream().map(Node::id).toList()),
                  minIsrCount,
                  Optional.ofNullable(moving.get(new TopicPartition(topic.name(), p.partition())))
                      .map(PartitionReassignment::removingReplicas)
                      .orElse(List.of()),
                  sizes.getOrDefault(new TopicPartition(topic.name(), p.partition()), 0L)));
        }
      }
      return new BrokerView(controller, live, partitions);
    }
  }

  /**
   * The partitions that restarting {@code brokerId} would take below {@code min.insync.replicas}. A
   * partition with no more replicas than its minimum cannot stay writable through any restart, so
   * it does not block one (Strimzi's rule).
   */
  List<String> wouldFallBelowMinIsr(int brokerId) {
    return partitions.stream()
        .filter(p -> p.replicas.size() > p.minIsr)
        .filter(p -> p.isr.contains(brokerId) && p.isr.size() - 1 < p.minIsr)
        .map(PartitionView::name)
        .toList();
  }

  /**
   * Partitions with a replica on a live broker that is not in the ISR: a broker catching up, such
   * as the one restarted last. A replica on a broker that is down is not catching up; {@link
   * #wouldFallBelowMinIsr} accounts for it.
   */
  List<String> catchingUp() {
    return partitions.stream()
        .filter(
            p -> p.replicas.stream().anyMatch(r -> liveBrokers.contains(r) && !p.isr.contains(r)))
        .map(PartitionView::name)
        .toList();
  }

  /** Partitions with a replica on one of {@code brokerIds}. */
  List<String> hostedBy(Set<Integer> brokerIds) {
    return partitions.stream()
        .filter(p -> p.replicas.stream().anyMatch(brokerIds::contains))
        .map(PartitionView::name)
        .toList();
  }
}
