package io.tidelog.broker.group;

import io.tidelog.broker.group.ClassicGroup.Snapshot;
import io.tidelog.broker.group.ClassicGroup.State;
import io.tidelog.broker.group.GroupRecords.Entry;
import io.tidelog.broker.group.GroupRecords.GroupEntry;
import io.tidelog.broker.group.GroupRecords.OffsetEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The groups and committed offsets kept in one partition of {@code __consumer_offsets}, on the
 * broker that leads it: first replayed from the partition's records while it loads, then served.
 *
 * <p>Not thread-safe: the loader builds it, then hands it to the coordinator's thread, which alone
 * uses it from then on.
 */
final class CoordinatorPartition {
  final TopicPartition tp;
  final int leaderEpoch;
  private final long initialRebalanceDelayMs;
  private final Map<String, ClassicGroup> groups = new LinkedHashMap<>();
  private final Map<String, Map<TopicPartition, CommittedOffset>> offsets = new HashMap<>();

  /**
   * Where in the log each committed offset's record is, where known: a transaction's offset becomes
   * committed at its marker only if its record is later than the one committed, as in Kafka.
   */
  private final Map<String, Map<TopicPartition, Long>> recordOffsets = new HashMap<>();

  /**
   * Offsets that open transactions committed (TxnOffsetCommit), by producer id: written, and kept
   * out of sight until the transaction's commit marker moves them among the committed offsets; an
   * abort marker drops them.
   */
  private final Map<Long, List<OffsetEntry>> pendingTransactionalOffsets = new HashMap<>();

  /** Transactions that ended while the partition loaded, to apply when the load completes. */
  private final Map<Long, Boolean> endedWhileLoading = new LinkedHashMap<>();

  /** The stored form of each group, as last written or loaded, to write only what changed. */
  private final Map<String, Snapshot> stored = new HashMap<>();

  private boolean loaded;

  CoordinatorPartition(TopicPartition tp, int leaderEpoch, long initialRebalanceDelayMs) {
    this.tp = tp;
    this.leaderEpoch = leaderEpoch;
    this.initialRebalanceDelayMs = initialRebalanceDelayMs;
  }

  boolean isLoaded() {
    return loaded;
  }

  /** Replays one record of the partition, in log order; the last record of a key wins. */
  void replay(Entry entry) {
    if (entry instanceof OffsetEntry o) {
      if (o.offset() != null) {
        offsets.computeIfAbsent(o.groupId(), g -> new HashMap<>()).put(o.tp(), o.offset());
        recordOffsets
            .computeIfAbsent(o.groupId(), g -> new HashMap<>())
            .put(o.tp(), o.recordOffset());
        return;
      }
      remove(offsets, o);
      remove(recordOffsets, o);
    } else if (entry instanceof GroupEntry g) {
      if (g.group() == null) {
        stored.remove(g.groupId());
      } else {
        stored.put(g.groupId(), g.group());
      }
    }
  }

  private static void remove(Map<String, ? extends Map<TopicPartition, ?>> byGroup, OffsetEntry o) {
    Map<TopicPartition, ?> group = byGroup.get(o.groupId());
    if (group != null) {
      group.remove(o.tp());
      if (group.isEmpty()) {
        byGroup.remove(o.groupId());
      }
    }
  }

  /** Replays, or records, an offset that the open transaction of {@code producerId} committed. */
  void replayTransactional(long producerId, OffsetEntry entry) {
    pendingTransactionalOffsets.computeIfAbsent(producerId, p -> new ArrayList<>()).add(entry);
  }

  /**
   * The transaction of {@code producerId} ended (its marker, written here, is replicated): its
   * offsets become committed, or are dropped. A loaded partition applies it at once; a loading one
   * when its load completes, as the loader owns its state until then. On the coordinator thread.
   */
  void completeTransaction(long producerId, boolean commit) {
    if (!loaded) {
      endedWhileLoading.put(producerId, commit);
      return;
    }
    applyTransactionEnd(producerId, commit);
  }

  /** Replays a commit or abort marker of {@code producerId}, in log order, while loading. */
  void replayTransactionEnd(long producerId, boolean commit) {
    applyTransactionEnd(producerId, commit);
  }

  private void applyTransactionEnd(long producerId, boolean commit) {
    List<OffsetEntry> pending = pendingTransactionalOffsets.remove(producerId);
    if (pending == null || !commit) {
      return;
    }
    for (OffsetEntry entry : pending) {
      Long current = recordOffsets.getOrDefault(entry.groupId(), Map.of()).get(entry.tp());
      // a plain commit written after the transaction's offset stands
      if (current == null || entry.recordOffset() > current) {
        replay(entry);
      }
    }
  }

  /** Whether an open transaction committed an offset of the group's partition (not yet visible). */
  boolean hasPendingOffset(String groupId, TopicPartition tp) {
    for (List<OffsetEntry> pending : pendingTransactionalOffsets.values()) {
      for (OffsetEntry entry : pending) {
        if (entry.groupId().equals(groupId) && entry.tp().equals(tp)) {
          return true;
        }
      }
    }
    return false;
  }

  private boolean hasPendingOffsets(String groupId) {
    return pendingTransactionalOffsets.values().stream()
        .anyMatch(pending -> pending.stream().anyMatch(e -> e.groupId().equals(groupId)));
  }

  /**
   * Ends loading: every stored group comes back (its members get a session from {@code nowMs} to
   * find this coordinator), and a group that only has offsets comes back empty.
   */
  void completeLoad(long nowMs) {
    stored.forEach(
        (groupId, snapshot) ->
            groups.put(
                groupId, ClassicGroup.restore(groupId, initialRebalanceDelayMs, snapshot, nowMs)));
    for (String groupId : offsets.keySet()) {
      groups.computeIfAbsent(groupId, g -> new ClassicGroup(g, initialRebalanceDelayMs, -1));
    }
    loaded = true;
    endedWhileLoading.forEach(this::applyTransactionEnd);
    endedWhileLoading.clear();
  }

  int groupCount() {
    return groups.size();
  }

  int offsetCount() {
    return offsets.values().stream().mapToInt(Map::size).sum();
  }

  ClassicGroup group(String groupId) {
    return groups.get(groupId);
  }

  ClassicGroup getOrCreateGroup(String groupId, long nowMs) {
    return groups.computeIfAbsent(
        groupId, g -> new ClassicGroup(g, initialRebalanceDelayMs, nowMs));
  }

  Iterable<ClassicGroup> groups() {
    return groups.values();
  }

  void removeGroup(String groupId) {
    groups.remove(groupId);
    offsets.remove(groupId);
    stored.remove(groupId);
  }

  Map<TopicPartition, CommittedOffset> offsets(String groupId) {
    return offsets.getOrDefault(groupId, Map.of());
  }

  /**
   * The group's state to write, when its membership settled (stable or empty) into something other
   * than what was last written; null when there is nothing to write.
   */
  Snapshot changedSnapshot(ClassicGroup group) {
    if (group.state() != State.STABLE && group.state() != State.EMPTY) {
      return null;
    }
    Snapshot now = group.snapshot();
    Snapshot before = stored.get(group.groupId());
    boolean same =
        before != null
            ? before.generation() == now.generation() && memberIds(before).equals(memberIds(now))
            : now.state() == State.EMPTY && now.generation() == 0;
    return same ? null : now;
  }

  private static List<String> memberIds(Snapshot snapshot) {
    return snapshot.members().stream().map(ClassicGroup.MemberSnapshot::memberId).toList();
  }

  /**
   * Offsets past {@code offsets.retention.minutes}: only of empty groups, counted from when the
   * group became empty or from the commit, whichever is later, as Kafka does since 2.1.
   */
  List<OffsetEntry> expiredOffsets(long nowMs, long retentionMs) {
    List<OffsetEntry> expired = new ArrayList<>();
    offsets.forEach(
        (groupId, committed) -> {
          ClassicGroup group = groups.get(groupId);
          if (group != null && group.state() != State.EMPTY) {
            return;
          }
          long emptySinceMs = group == null ? -1 : group.emptySinceMs();
          committed.forEach(
              (tp, offset) -> {
                if (nowMs - Math.max(offset.commitTimestampMs(), emptySinceMs) >= retentionMs) {
                  expired.add(new OffsetEntry(groupId, tp, null));
                }
              });
        });
    return expired;
  }

  /** Empty groups without offsets, which Kafka deletes along with expired offsets. */
  List<String> deadGroups() {
    return groups.values().stream()
        .filter(g -> g.state() == State.EMPTY && g.size() == 0)
        .map(ClassicGroup::groupId)
        .filter(id -> !offsets.containsKey(id) && !hasPendingOffsets(id))
        .toList();
  }

  /** Records the group state that was written. */
  void stored(String groupId, Snapshot snapshot) {
    stored.put(groupId, snapshot);
  }
}
