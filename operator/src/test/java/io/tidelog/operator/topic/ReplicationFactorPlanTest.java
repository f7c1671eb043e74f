package io.tidelog.operator.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;

class ReplicationFactorPlanTest {
  private static final List<Node> BROKERS =
      List.of(node(0, "a"), node(1, "a"), node(2, "b"), node(3, "c"));

  private static Node node(int id, String rack) {
    return new Node(id, "broker-" + id, 9092, rack);
  }

  private static TopicPartitionInfo partition(
      int p, int leader, List<Integer> replicas, List<Integer> isr) {
    return new TopicPartitionInfo(
        p,
        BROKERS.get(leader),
        replicas.stream().map(BROKERS::get).toList(),
        isr.stream().map(BROKERS::get).toList());
  }

  @Test
  void growingAddsBrokersOfOtherRacksFirstThenTheLeastLoaded() throws Exception {
    // both partitions are on rack a: each takes rack b's and rack c's broker, not broker 0 or 1
    Map<Integer, List<Integer>> targets =
        ReplicationFactorPlan.targets(
            List.of(
                partition(0, 0, List.of(0), List.of(0)), partition(1, 1, List.of(1), List.of(1))),
            BROKERS,
            3);

    assertThat(targets).isEqualTo(Map.of(0, List.of(0, 2, 3), 1, List.of(1, 2, 3)));
  }

  @Test
  void growingWithoutRacksSpreadsByLoad() throws Exception {
    List<Node> plain = List.of(new Node(0, "h", 1), new Node(1, "h", 1), new Node(2, "h", 1));
    Map<Integer, List<Integer>> targets =
        ReplicationFactorPlan.targets(
            List.of(
                new TopicPartitionInfo(0, plain.get(0), List.of(plain.get(0)), List.of()),
                new TopicPartitionInfo(1, plain.get(0), List.of(plain.get(0)), List.of()),
                new TopicPartitionInfo(2, plain.get(1), List.of(plain.get(1)), List.of())),
            plain,
            2);

    // broker 2 holds nothing, so it is taken first; then the least loaded
    assertThat(targets).isEqualTo(Map.of(0, List.of(0, 2), 1, List.of(0, 1), 2, List.of(1, 2)));
  }

  @Test
  void shrinkingKeepsTheLeaderThenTheInSyncReplicasInTheirOrder() throws Exception {
    Map<Integer, List<Integer>> targets =
        ReplicationFactorPlan.targets(
            List.of(
                // the leader is the last replica, and replica 0 is out of sync: 0 goes
                partition(0, 2, List.of(0, 1, 2), List.of(2, 1)),
                // all in sync: the last one goes, the preferred leader stays first
                partition(1, 1, List.of(1, 2, 3), List.of(1, 2, 3)),
                // already the factor: not moved
                partition(2, 3, List.of(3, 0), List.of(3, 0))),
            BROKERS,
            2);

    assertThat(targets).isEqualTo(Map.of(0, List.of(1, 2), 1, List.of(1, 2)));
  }

  @Test
  void aFactorAboveTheBrokerCountIsRefusedWithKafkasMessage() {
    assertThatThrownBy(
            () ->
                ReplicationFactorPlan.targets(
                    List.of(partition(0, 0, List.of(0), List.of(0))), BROKERS, 5))
        .isInstanceOf(TopicChanges.Refused.class)
        .hasMessage(
            "spec.replicas: Unable to replicate the partition 5 time(s): The target replication"
                + " factor of 5 cannot be reached because only 4 broker(s) are registered.");
  }
}
