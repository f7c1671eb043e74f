package io.tidelog.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.operator.cluster.BrokerView.PartitionView;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class DrainPlanTest {
  private static final List<Node> FIVE =
      IntStream.range(0, 5).mapToObj(id -> new Node(id, "b" + id, 9092)).toList();

  @Test
  void replicasOnRemovedBrokersMoveToTheLeastLoadedThatStayTheOthersStay() {
    Map<TopicPartition, List<Integer>> targets =
        new DrainPlan(Set.of(3, 4))
            .targets(
                FIVE,
                List.of(
                    new PartitionView("t-0", List.of(3, 0, 4), Set.of(3, 0, 4), 2),
                    new PartitionView("t-1", List.of(1, 3, 2), Set.of(1, 3, 2), 2),
                    new PartitionView("t-2", List.of(0, 1, 2), Set.of(0, 1, 2), 2)));

    // t-0 keeps 0 and takes 1 and 2; t-1 keeps 1 and 2 and takes the least loaded left, 0
    assertThat(targets)
        .isEqualTo(
            Map.of(
                new TopicPartition("t", 0), List.of(0, 1, 2),
                new TopicPartition("t", 1), List.of(1, 2, 0)));
  }

  @Test
  void emptyBrokersMeanNothingToMove() {
    assertThat(
            new DrainPlan(Set.of(3, 4))
                .targets(
                    FIVE, List.of(new PartitionView("t-0", List.of(0, 1, 2), Set.of(0, 1), 2))))
        .isEmpty();
  }
}
