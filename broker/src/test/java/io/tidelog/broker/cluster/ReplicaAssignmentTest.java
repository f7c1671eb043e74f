package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.junit.jupiter.api.Test;

class ReplicaAssignmentTest {
  private static BrokerInfo broker(int id, String rack) {
    return new BrokerInfo(
        id,
        List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092 + id)),
        rack,
        "i" + id,
        false);
  }

  @Test
  void replicasSpanEveryRackAndLeadershipIsEven() {
    // Given six brokers in three racks, listed in no particular order
    List<BrokerInfo> brokers =
        List.of(
            broker(5, "c"),
            broker(0, "a"),
            broker(3, "b"),
            broker(1, "a"),
            broker(4, "c"),
            broker(2, "b"));
    Map<String, String> rackOf = new HashMap<>();
    brokers.forEach(b -> rackOf.put(String.valueOf(b.id()), b.rack()));

    List<List<Integer>> assignment = ReplicaAssignment.assign(brokers, 12, 3, 7);

    assertThat(assignment).hasSize(12);
    for (List<Integer> replicas : assignment) {
      assertThat(replicas.stream().map(id -> rackOf.get(String.valueOf(id))).distinct()).hasSize(3);
    }
    Map<Integer, Long> leaders = new HashMap<>();
    assignment.forEach(replicas -> leaders.merge(replicas.get(0), 1L, Long::sum));
    assertThat(leaders).hasSize(6).allSatisfy((id, count) -> assertThat(count).isEqualTo(2));
  }

  @Test
  void withoutRacksReplicasAreDistinctBrokers() {
    List<BrokerInfo> brokers = IntStream.range(0, 4).mapToObj(id -> broker(id, null)).toList();

    for (List<Integer> replicas : ReplicaAssignment.assign(brokers, 8, 3, 0)) {
      assertThat(replicas).doesNotHaveDuplicates().hasSize(3);
    }
  }

  @Test
  void aReplicationFactorAboveTheBrokerCountIsRefused() {
    List<BrokerInfo> brokers = List.of(broker(0, null), broker(1, null));

    assertThrows(
        InvalidReplicationFactorException.class, () -> ReplicaAssignment.assign(brokers, 1, 3, 0));
  }
}
