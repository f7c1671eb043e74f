package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The controller's decisions for one partition, given the live brokers. */
class ControllerTest {
  private static final TopicPartition TP = new TopicPartition("t", 0);
  private static final List<Integer> REPLICAS = List.of(1, 2, 3);

  private static PartitionState state(int leader, List<Integer> isr) {
    return new PartitionState(leader, 4, isr, 7, 100);
  }

  private static Optional<PartitionState> decide(
      PartitionState state, Set<Integer> live, boolean unclean, boolean rebalance) {
    return Controller.decide(TP, state, REPLICAS, live, unclean, rebalance);
  }

  @Test
  void aDeadLeaderIsReplacedByTheFirstLiveIsrMemberInReplicaOrderWithBothEpochsBumped() {
    PartitionState next = decide(state(1, List.of(3, 1, 2)), Set.of(2, 3), false, false).get();

    assertThat(next.leader()).isEqualTo(2);
    assertThat(next.isr()).containsExactly(3, 2);
    assertThat(next.leaderEpoch()).isEqualTo(5);
    assertThat(next.partitionEpoch()).isEqualTo(8);
  }

  @Test
  void aBrokerThatIsNoLongerAReplicaLeavesTheIsrAndItsLeadership() {
    // a completed move took broker 4 away while its state still names it
    PartitionState next =
        decide(state(4, List.of(4, 1, 2)), Set.of(1, 2, 3, 4), false, false).orElseThrow();

    assertThat(next.leader()).isEqualTo(1);
    assertThat(next.isr()).containsExactly(1, 2);
    assertThat(next.leaderEpoch()).isEqualTo(5);
  }

  @Test
  void aDeadFollowerLeavesTheIsrUnderTheSameLeaderAndEpoch() {
    PartitionState next = decide(state(1, List.of(1, 2, 3)), Set.of(1, 2), false, false).get();

    assertThat(next.leader()).isEqualTo(1);
    assertThat(next.isr()).containsExactly(1, 2);
    assertThat(next.leaderEpoch()).isEqualTo(4);
    assertThat(next.partitionEpoch()).isEqualTo(8);
  }

  @Test
  void withNoLiveIsrMemberThePartitionGoesOfflineUnlessUncleanElectionIsOn() {
    PartitionState onlyThreeInSync = state(3, List.of(3));

    PartitionState offline = decide(onlyThreeInSync, Set.of(1, 2), false, false).get();
    assertThat(offline.leader()).isEqualTo(PartitionState.NO_LEADER);
    assertThat(offline.isr()).containsExactly(3);
    assertThat(decide(offline, Set.of(1, 2), false, false)).isEmpty();

    PartitionState unclean = decide(offline, Set.of(1, 2), true, false).get();
    assertThat(unclean.leader()).isEqualTo(1);
    assertThat(unclean.isr()).containsExactly(1);

    // The last ISR member coming back leads again, cleanly
    assertThat(decide(offline, Set.of(1, 2, 3), false, false).get().leader()).isEqualTo(3);
  }

  @Test
  void theRebalanceMovesLeadershipBackToThePreferredReplicaOnlyWhenItIsInSync() {
    PartitionState ledBySecond = state(2, List.of(2, 3, 1));

    assertThat(decide(ledBySecond, Set.of(1, 2, 3), false, false)).isEmpty();
    assertThat(decide(ledBySecond, Set.of(1, 2, 3), false, true).get().leader()).isEqualTo(1);
    assertThat(decide(state(2, List.of(2, 3)), Set.of(1, 2, 3), false, true)).isEmpty();
  }
}
