package io.tidelog.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.group.ClassicGroup.JoinRequest;
import io.tidelog.broker.group.ClassicGroup.MemberSnapshot;
import io.tidelog.broker.group.ClassicGroup.Protocol;
import io.tidelog.broker.group.ClassicGroup.Snapshot;
import io.tidelog.broker.group.ClassicGroup.State;
import io.tidelog.broker.group.GroupRecords.OffsetEntry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;

/** Replaying __consumer_offsets records, in Kafka's format, and expiring offsets. */
class CoordinatorPartitionTest {
  private static final int RETENTION_MS = 60_000;
  private static final TopicPartition TP = new TopicPartition("orders", 3);

  private final CoordinatorPartition partition =
      new CoordinatorPartition(new TopicPartition("__consumer_offsets", 0), 1, 0);

  /** Writes records as the coordinator does and replays them as a loading coordinator does. */
  private void replay(SimpleRecord... records) {
    MemoryRecords written = MemoryRecords.withRecords(Compression.NONE, records);
    List<Record> read = new ArrayList<>();
    written.records().forEach(read::add);
    read.forEach(r -> GroupRecords.parse(r).ifPresent(partition::replay));
  }

  private static Snapshot stableGroupOf(String memberId) {
    return new Snapshot(
        State.STABLE,
        "consumer",
        4,
        "range",
        memberId,
        -1,
        List.of(
            new MemberSnapshot(
                memberId,
                "instance-1",
                "client",
                "/10.0.0.1",
                30_000,
                10_000,
                new byte[] {1},
                new byte[] {2})));
  }

  @Test
  void recordsUseKafkasKeyTypesAndTheLastRecordOfAKeyWins() {
    // Given commits of one partition, a group's metadata, and a later commit and tombstone
    SimpleRecord first =
        GroupRecords.offsetCommit("g", TP, new CommittedOffset(5, 2, "five", 100), 100);
    assertThat(ByteBuffer.wrap(first.key().array()).getShort()).isEqualTo((short) 1);
    SimpleRecord group = GroupRecords.groupMetadata("g", stableGroupOf("m-1"), 100);
    assertThat(ByteBuffer.wrap(group.key().array()).getShort()).isEqualTo((short) 2);
    TopicPartition other = new TopicPartition("orders", 4);

    // When they are replayed in order
    replay(
        first,
        group,
        GroupRecords.offsetCommit("g", other, new CommittedOffset(9, -1, "", 110), 110),
        GroupRecords.offsetCommit("g", TP, new CommittedOffset(7, 3, "seven", 120), 120),
        GroupRecords.offsetTombstone("g", other, 130));
    partition.completeLoad(1_000);

    // Then the latest commit stands, the deleted one is gone, and the group is back, stable
    assertThat(partition.offsets("g")).containsOnlyKeys(TP);
    assertThat(partition.offsets("g").get(TP)).isEqualTo(new CommittedOffset(7, 3, "seven", 120));
    ClassicGroup restored = partition.group("g");
    assertThat(restored.state()).isEqualTo(State.STABLE);
    assertThat(restored.generation()).isEqualTo(4);
    assertThat(restored.leaderId()).contains("m-1");
    MemberSnapshot member = restored.snapshot().members().get(0);
    assertThat(member.groupInstanceId()).isEqualTo("instance-1");
    assertThat(member.clientHost()).isEqualTo("/10.0.0.1");
    assertThat(member.assignment()).containsExactly(2);
    // and its member heartbeats at the same generation without a rebalance
    assertThat(restored.heartbeat("m-1", "instance-1", 4, 2_000))
        .isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
  }

  @Test
  void aGroupTombstoneDeletesTheGroup() {
    replay(
        GroupRecords.groupMetadata("g", stableGroupOf("m-1"), 100),
        GroupRecords.groupTombstone("g", 200));
    partition.completeLoad(1_000);
    assertThat(partition.group("g")).isNull();
  }

  @Test
  void offsetsExpireOnlyForEmptyGroupsCountedFromWhenTheyEmptied() {
    // Given a standalone commit at t=0 and a live group's commit at t=0
    replay(
        GroupRecords.offsetCommit("standalone", TP, new CommittedOffset(1, -1, "", 0), 0),
        GroupRecords.offsetCommit("live", TP, new CommittedOffset(1, -1, "", 0), 0));
    partition.completeLoad(0);
    ClassicGroup live = partition.group("live");
    live.join(
        new JoinRequest(
            "",
            null,
            "c",
            "/127.0.0.1",
            "consumer",
            List.of(new Protocol("range", new byte[0])),
            RETENTION_MS * 10,
            RETENTION_MS * 10,
            false),
        0);
    live.tick(0);

    // When the retention passes, only the standalone commit expires
    assertThat(partition.expiredOffsets(RETENTION_MS - 1, RETENTION_MS)).isEmpty();
    List<OffsetEntry> expired = partition.expiredOffsets(RETENTION_MS, RETENTION_MS);
    assertThat(expired).extracting(OffsetEntry::groupId).containsExactly("standalone");

    // And once applied, the standalone group is dead, the live one is not
    expired.forEach(partition::replay);
    assertThat(partition.deadGroups()).containsExactly("standalone");
  }

  /** A commit record of {@code group}'s {@code tp} at {@code recordOffset}, as a load reads it. */
  private static OffsetEntry commitAt(long recordOffset, TopicPartition tp, long offset) {
    MemoryRecords written =
        MemoryRecords.withRecords(
            recordOffset,
            Compression.NONE,
            GroupRecords.offsetCommit("g", tp, new CommittedOffset(offset, -1, "", 0), 0));
    return (OffsetEntry) GroupRecords.parse(written.records().iterator().next()).orElseThrow();
  }

  @Test
  void aTransactionsOffsetIsCommittedAtItsMarkerOnlyIfLaterInTheLogThanThePartitionsLast() {
    partition.completeLoad(0);
    // Given a transaction's offset at record 10, then a plain commit of the partition at 11
    partition.replayTransactional(42, commitAt(10, TP, 7));
    partition.replay(commitAt(11, TP, 9));

    // When the transaction commits, the later plain commit stands, as in Kafka
    partition.completeTransaction(42, true);
    assertThat(partition.offsets("g").get(TP).offset()).isEqualTo(9);

    // And the other way round, a plain commit at 12 and a transaction's offset at 13: it wins
    TopicPartition other = new TopicPartition("orders", 4);
    partition.replay(commitAt(12, other, 3));
    partition.replayTransactional(43, commitAt(13, other, 5));
    partition.completeTransaction(43, true);
    assertThat(partition.offsets("g").get(other).offset()).isEqualTo(5);
  }
}
