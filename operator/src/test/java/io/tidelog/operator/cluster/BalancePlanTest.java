package io.tidelog.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.operator.cluster.BrokerView.PartitionView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class BalancePlanTest {
  private static List<Node> brokers(int count, String... racks) {
    List<Node> nodes = new ArrayList<>();
    for (int id = 0; id < count; id++) {
      nodes.add(new Node(id, "b" + id, 9092, racks.length == 0 ? null : racks[id]));
    }
    return nodes;
  }

  /** {@code count} partitions of topic t, replicas on brokers 0, 1 and 2. */
  private static List<PartitionView> onFirstThree(int count) {
    List<PartitionView> partitions = new ArrayList<>();
    for (int p = 0; p < count; p++) {
      partitions.add(new PartitionView("t-" + p, List.of(0, 1, 2), Set.of(0, 1, 2), 2));
    }
    return partitions;
  }

  private static Map<Integer, Integer> loads(
      List<PartitionView> partitions, Map<TopicPartition, List<Integer>> targets) {
    Map<Integer, Integer> load = new HashMap<>();
    for (PartitionView p : partitions) {
      targets
          .getOrDefault(p.topicPartition(), p.replicas())
          .forEach(r -> load.merge(r, 1, Integer::sum));
    }
    return load;
  }

  @Test
  void twoNewBrokersGetTheirShareAndEveryPartitionKeepsDistinctReplicas() {
    List<PartitionView> partitions = onFirstThree(10); // 30 replicas on 3 of 5 brokers
    Map<TopicPartition, List<Integer>> targets =
        new BalancePlan(Set.of(0, 1, 2, 3, 4), 500).targets(brokers(5), partitions);

    assertThat(loads(partitions, targets)).isEqualTo(Map.of(0, 6, 1, 6, 2, 6, 3, 6, 4, 6));
    assertThat(targets.values()).allSatisfy(t -> assertThat(Set.copyOf(t)).hasSize(3));
  }

  @Test
  void aBalancedClusterMovesNothing() {
    assertThat(new BalancePlan(Set.of(0, 1, 2), 500).targets(brokers(3), onFirstThree(4)))
        .isEmpty();
  }

  @Test
  void aStepMovesAtMostItsBound() {
    assertThat(new BalancePlan(Set.of(0, 1, 2, 3, 4), 3).targets(brokers(5), onFirstThree(10)))
        .hasSize(3);
  }

  @Test
  void aMoveKeepsAPartitionsRacksSpread() {
    // brokers 0, 1, 2 in racks a, b, c; the new broker 3 is in rack a: only broker 0's replicas
    // may go there, or the partition would have two replicas in rack a
    List<PartitionView> partitions = onFirstThree(4);
    Map<TopicPartition, List<Integer>> targets =
        new BalancePlan(Set.of(0, 1, 2, 3), 500)
            .targets(brokers(4, "a", "b", "c", "a"), partitions);

    assertThat(targets).isNotEmpty();
    assertThat(targets.values()).allSatisfy(t -> assertThat(t).containsExactly(3, 1, 2));
  }

  private static final long MB = 1024L * 1024;

  private static Map<Integer, Long> bytes(
      List<PartitionView> partitions, Map<TopicPartition, List<Integer>> targets) {
    Map<Integer, Long> bytes = new HashMap<>();
    for (PartitionView p : partitions) {
      targets
          .getOrDefault(p.topicPartition(), p.replicas())
          .forEach(r -> bytes.merge(r, p.sizeBytes(), Long::sum));
    }
    return bytes;
  }

  @Test
  void newBrokersGetTheirShareOfBytesAsWellAsOfReplicas() {
    // 12 partitions of one replica on brokers 0 and 1: broker 0's are 1 GB each, broker 1's 10 MB;
    // brokers 2 and 3 are new
    List<PartitionView> partitions = new ArrayList<>();
    for (int p = 0; p < 12; p++) {
      int broker = p % 2;
      partitions.add(
          new PartitionView(
              "t-" + p,
              List.of(broker),
              Set.of(broker),
              1,
              List.of(),
              broker == 0 ? 1024 * MB : 10 * MB));
    }
    Map<TopicPartition, List<Integer>> targets =
        new BalancePlan(Set.of(0, 1, 2, 3), 500).targets(brokers(4), partitions);

    // every broker holds 3 replicas and 1.5 to 2 GB: by count alone broker 0 could keep 6 GB
    assertThat(loads(partitions, targets)).isEqualTo(Map.of(0, 3, 1, 3, 2, 3, 3, 3));
    assertThat(bytes(partitions, targets).values())
        .allSatisfy(b -> assertThat(b).isBetween(1024 * MB, 2100 * MB));
  }

  @Test
  void bytesWithinTheToleranceMoveNothing() {
    List<PartitionView> partitions = new ArrayList<>();
    for (int p = 0; p < 4; p++) {
      partitions.add(
          new PartitionView(
              "t-" + p, List.of(p % 2), Set.of(p % 2), 1, List.of(), (p % 2 == 0 ? 100 : 95) * MB));
    }
    assertThat(new BalancePlan(Set.of(0, 1), 500).targets(brokers(2), partitions)).isEmpty();
  }
}
