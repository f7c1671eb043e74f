package io.tidelog.broker.group;

import io.tidelog.broker.group.ClassicGroup.MemberSnapshot;
import io.tidelog.broker.group.ClassicGroup.Snapshot;
import io.tidelog.broker.group.ClassicGroup.State;
import java.nio.ByteBuffer;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.coordinator.group.generated.CoordinatorRecordType;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.GroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;

/**
 * The records of {@code __consumer_offsets}, in Kafka's own format, so that Kafka's tools read
 * them: a key is a 2-byte record type ({@code 1} offset commit, {@code 2} group metadata; {@code 0}
 * is the legacy offset commit) and the key message; a value is a 2-byte version and the value
 * message; a record without a value deletes its key (a tombstone, which compaction removes in
 * time). Records of other types, such as KIP-848's, are skipped.
 *
 * <p>Stateless; any thread.
 */
final class GroupRecords {
  private static final short OFFSET_COMMIT_VALUE_VERSION = 3;
  private static final short GROUP_METADATA_VALUE_VERSION = 3;

  /** A record read back: one group's metadata or one committed offset, either possibly deleted. */
  sealed interface Entry {}

  /**
   * {@code offset} null: the commit was deleted. {@code recordOffset}: the record's offset in
   * {@code __consumer_offsets}, or {@link #NOT_WRITTEN} before it is appended.
   */
  record OffsetEntry(String groupId, TopicPartition tp, CommittedOffset offset, long recordOffset)
      implements Entry {
    static final long NOT_WRITTEN = -1;

    OffsetEntry(String groupId, TopicPartition tp, CommittedOffset offset) {
      this(groupId, tp, offset, NOT_WRITTEN);
    }

    /** This entry, appended at {@code recordOffset}. */
    OffsetEntry at(long recordOffset) {
      return new OffsetEntry(groupId, tp, offset, recordOffset);
    }
  }

  /** {@code group} null: the group was deleted. */
  record GroupEntry(String groupId, Snapshot group) implements Entry {}

  private GroupRecords() {}

  static SimpleRecord offsetCommit(
      String groupId, TopicPartition tp, CommittedOffset offset, long nowMs) {
    OffsetCommitValue value =
        new OffsetCommitValue()
            .setOffset(offset.offset())
            .setLeaderEpoch(offset.leaderEpoch())
            .setMetadata(offset.metadata())
            .setCommitTimestamp(offset.commitTimestampMs());
    return new SimpleRecord(
        nowMs,
        offsetKey(groupId, tp),
        MessageUtil.toVersionPrefixedBytes(OFFSET_COMMIT_VALUE_VERSION, value));
  }

  static SimpleRecord offsetTombstone(String groupId, TopicPartition tp, long nowMs) {
    return new SimpleRecord(nowMs, offsetKey(groupId, tp), null);
  }

  static SimpleRecord groupMetadata(String groupId, Snapshot group, long nowMs) {
    GroupMetadataValue value =
        new GroupMetadataValue()
            .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
            .setGeneration(group.generation())
            .setProtocol(group.protocolName())
            .setLeader(group.leaderId())
            .setCurrentStateTimestamp(group.stateTimestampMs());
    for (MemberSnapshot m : group.members()) {
      value
          .members()
          .add(
              new GroupMetadataValue.MemberMetadata()
                  .setMemberId(m.memberId())
                  .setGroupInstanceId(m.groupInstanceId())
                  .setClientId(m.clientId())
                  .setClientHost(m.clientHost())
                  .setRebalanceTimeout(m.rebalanceTimeoutMs())
                  .setSessionTimeout(m.sessionTimeoutMs())
                  .setSubscription(m.metadata())
                  .setAssignment(m.assignment()));
    }
    return new SimpleRecord(
        nowMs,
        groupKey(groupId),
        MessageUtil.toVersionPrefixedBytes(GROUP_METADATA_VALUE_VERSION, value));
  }

  static SimpleRecord groupTombstone(String groupId, long nowMs) {
    return new SimpleRecord(nowMs, groupKey(groupId), null);
  }

  private static byte[] offsetKey(String groupId, TopicPartition tp) {
    return MessageUtil.toCoordinatorTypePrefixedBytes(
        new OffsetCommitKey().setGroup(groupId).setTopic(tp.topic()).setPartition(tp.partition()));
  }

  private static byte[] groupKey(String groupId) {
    return MessageUtil.toCoordinatorTypePrefixedBytes(new GroupMetadataKey().setGroup(groupId));
  }

  /**
   * Reads one record.
   *
   * @return empty for a record of a type groups do not use
   * @throws RuntimeException when the record is malformed
   */
  static Optional<Entry> parse(Record record) {
    if (!record.hasKey()) {
      return Optional.empty();
    }
    ByteBuffer key = record.key();
    short type = key.getShort();
    ByteBuffer value = record.hasValue() ? record.value() : null;
    if (type == CoordinatorRecordType.LEGACY_OFFSET_COMMIT.id()
        || type == CoordinatorRecordType.OFFSET_COMMIT.id()) {
      OffsetCommitKey k = new OffsetCommitKey(new ByteBufferAccessor(key), (short) 0);
      TopicPartition tp = new TopicPartition(k.topic(), k.partition());
      if (value == null) {
        return Optional.of(new OffsetEntry(k.group(), tp, null, record.offset()));
      }
      OffsetCommitValue v = new OffsetCommitValue(new ByteBufferAccessor(value), value.getShort());
      return Optional.of(
          new OffsetEntry(
              k.group(),
              tp,
              new CommittedOffset(v.offset(), v.leaderEpoch(), v.metadata(), v.commitTimestamp()),
              record.offset()));
    }
    if (type == CoordinatorRecordType.GROUP_METADATA.id()) {
      GroupMetadataKey k = new GroupMetadataKey(new ByteBufferAccessor(key), (short) 0);
      if (value == null) {
        return Optional.of(new GroupEntry(k.group(), null));
      }
      GroupMetadataValue v =
          new GroupMetadataValue(new ByteBufferAccessor(value), value.getShort());
      return Optional.of(new GroupEntry(k.group(), snapshot(v)));
    }
    return Optional.empty();
  }

  private static Snapshot snapshot(GroupMetadataValue v) {
    return new Snapshot(
        v.members().isEmpty() ? State.EMPTY : State.STABLE,
        v.protocolType(),
        v.generation(),
        v.protocol(),
        v.leader(),
        v.currentStateTimestamp(),
        v.members().stream()
            .map(
                m ->
                    new MemberSnapshot(
                        m.memberId(),
                        m.groupInstanceId(),
                        m.clientId(),
                        m.clientHost(),
                        m.rebalanceTimeout(),
                        m.sessionTimeout(),
                        m.subscription(),
                        m.assignment()))
            .toList());
  }
}
