package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.junit.jupiter.api.Test;

/** A move's steps as Kafka's controller takes them (KIP-455), and its form in etcd. */
class PartitionReassignmentTest {
  private static final Set<Integer> LIVE = Set.of(1, 2, 3, 4);

  private static PartitionState state(int leader, List<Integer> isr) {
    return new PartitionState(leader, 5, isr, 9, 100);
  }

  @Test
  void aMoveListsTheTargetFirstThenTheReplicasItLeaves() {
    PartitionReassignment.Start start =
        PartitionReassignment.start(List.of(1, 2, 3), List.of(4, 2));

    assertThat(start.replicas()).containsExactly(4, 2, 1, 3);
    assertThat(start.reassignment().adding()).containsExactly(4);
    assertThat(start.reassignment().removing()).containsExactly(1, 3);
    assertThat(start.reassignment().target(start.replicas())).containsExactly(4, 2);
  }

  @Test
  void aReorderIsNoMove() {
    PartitionReassignment.Start start = PartitionReassignment.start(List.of(1, 2), List.of(2, 1));

    assertThat(start.replicas()).containsExactly(2, 1);
    assertThat(start.reassignment()).isNull();
  }

  @Test
  void itCompletesOnlyOnceTheWholeTargetIsInTheIsr() {
    PartitionReassignment move = new PartitionReassignment(List.of(4), List.of(3));
    List<Integer> replicas = List.of(1, 4, 3);

    assertThat(move.completion(replicas, state(1, List.of(1, 3)), LIVE)).isEmpty();
    PartitionState done = move.completion(replicas, state(1, List.of(1, 3, 4)), LIVE).orElseThrow();

    assertThat(done.isr()).containsExactly(1, 4);
    assertThat(done.leader()).isEqualTo(1);
    assertThat(done.leaderEpoch()).as("the leader stays").isEqualTo(5);
    assertThat(done.partitionEpoch()).isEqualTo(10);
  }

  @Test
  void aLeavingLeaderHandsOverToTheFirstTargetReplicaInTheIsr() {
    PartitionReassignment move = new PartitionReassignment(List.of(4), List.of(1));

    PartitionState done =
        move.completion(List.of(2, 4, 1), state(1, List.of(1, 2, 4)), LIVE).orElseThrow();

    assertThat(done.leader()).isEqualTo(2);
    assertThat(done.leaderEpoch()).isEqualTo(6);
    assertThat(done.isr()).containsExactly(2, 4);
  }

  @Test
  void noDeadReplicaIsMadeLeaderToComplete() {
    PartitionReassignment move = new PartitionReassignment(List.of(), List.of(1));

    assertThat(move.completion(List.of(2, 1), state(1, List.of(1, 2)), Set.of(1))).isEmpty();
  }

  @Test
  void aCancelDropsTheAddingReplicasAndMovesALeaderThatWasOne() {
    PartitionReassignment move = new PartitionReassignment(List.of(4), List.of(3));
    TopicMetadata topic =
        new TopicMetadata(
            "t", Uuid.randomUuid(), List.of(List.of(1, 4, 3)), Map.of(), Map.of(0, move), 7);

    assertThat(move.revertedReplicas(topic.replicas(0))).containsExactly(1, 3);
    PartitionState kept = state(1, List.of(1, 3));
    assertThat(move.revertedState(topic, 0, kept, LIVE, false)).isSameAs(kept);
    PartitionState moved = move.revertedState(topic, 0, state(4, List.of(4, 3)), LIVE, false);
    assertThat(moved.leader()).isEqualTo(3);
    assertThat(moved.isr()).containsExactly(3);
  }

  @Test
  void aCancelThatNeedsAnUncleanElectionIsRefusedUnlessTheTopicAllowsOne() {
    PartitionReassignment move = new PartitionReassignment(List.of(4), List.of(3));
    TopicMetadata topic =
        new TopicMetadata(
            "t", Uuid.randomUuid(), List.of(List.of(4, 3)), Map.of(), Map.of(0, move), 7);
    PartitionState onlyNew = state(4, List.of(4));

    InvalidReplicaAssignmentException refused =
        assertThrows(
            InvalidReplicaAssignmentException.class,
            () -> move.revertedState(topic, 0, onlyNew, LIVE, false));
    assertThat(refused.getMessage()).contains("would require an unclean leader election");
    assertThat(move.revertedState(topic, 0, onlyNew, LIVE, true).leader())
        .isEqualTo(PartitionState.NO_LEADER);
  }

  @Test
  void aTopicKeepsItsMovesThroughEtcd() {
    TopicMetadata topic =
        new TopicMetadata(
            "t",
            Uuid.randomUuid(),
            List.of(List.of(1), List.of(2, 3)),
            Map.of("retention.ms", "1"),
            Map.of(1, new PartitionReassignment(List.of(2), List.of(3))),
            0);

    JsonObject json = topic.toJson();
    TopicMetadata read = TopicMetadata.fromJson("t", new JsonObject(json.encode()), 0);

    assertThat(read).isEqualTo(topic);
    assertThat(read.replicationFactor()).isEqualTo(1);
    assertThat(read.reassignment(0)).isEqualTo(Optional.empty());
    JsonObject plain =
        new TopicMetadata("t", topic.topicId(), topic.assignment(), Map.of(), 0).toJson();
    assertThat(plain.containsKey("reassignments"))
        .as("a topic with no move is stored as before")
        .isFalse();
  }
}
