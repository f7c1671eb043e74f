package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.record.RecordBatch;

/**
 * The leader-epoch history of one partition replica: for each leader epoch, the first offset
 * written in it (KIP-101, KIP-279). A follower compares its history with the leader's to find where
 * the two logs diverge.
 *
 * <p>Persisted in Kafka's {@code leader-epoch-checkpoint} format ({@code <epoch> <startOffset>}
 * lines in a {@link CheckpointFile}) on every change, and truncated together with the log. Two
 * changes are written only before the log next grows ({@link #writeIfChanged}), since no record
 * depends on them until then: what loading the log trims ({@link #trimToLog}; Kafka flushes the
 * same trims asynchronously), and the epoch a new leader starts ({@link #startEpoch}; Kafka writes
 * it at once). Until then the file may hold epochs past the log's end, which every load trims
 * again, or lack an epoch in which nothing was written, which no follower's truncation needs. So a
 * broker restarting with many idle partitions, or taking over their leadership, writes no file for
 * them (two fsyncs each); every epoch of a record in the log is durable before the record.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
final class LeaderEpochCache {
  static final String FILE_NAME = "leader-epoch-checkpoint";

  private final CheckpointFile checkpoint;
  private final NavigableMap<Integer, Long> startOffsets = new TreeMap<>();

  /** Whether {@link #trimToLog} or {@link #startEpoch} changed the history since it was written. */
  private boolean unwritten;

  private LeaderEpochCache(CheckpointFile checkpoint) {
    this.checkpoint = checkpoint;
  }

  static LeaderEpochCache load(Path partitionDir) throws IOException {
    LeaderEpochCache cache =
        new LeaderEpochCache(new CheckpointFile(partitionDir.resolve(FILE_NAME)));
    for (String line : cache.checkpoint.read()) {
      String[] fields = line.split(" ");
      try {
        cache.startOffsets.put(Integer.parseInt(fields[0]), Long.parseLong(fields[1]));
      } catch (RuntimeException e) {
        throw new IOException("malformed leader epoch entry '" + line + "' in " + partitionDir, e);
      }
    }
    return cache;
  }

  /** Records that {@code epoch} starts at {@code startOffset}, when it is a new, later epoch. */
  void assign(int epoch, long startOffset) throws IOException {
    if (add(epoch, startOffset)) {
      persist();
    }
  }

  /**
   * As {@link #assign}, for the epoch a new leader starts at its log end: written before the log
   * next grows.
   */
  void startEpoch(int epoch, long startOffset) {
    unwritten |= add(epoch, startOffset);
  }

  private boolean add(int epoch, long startOffset) {
    if (epoch == RecordBatch.NO_PARTITION_LEADER_EPOCH || epoch <= latestEpoch()) {
      return false;
    }
    // A newer epoch that starts at or before older ones overrides them (the log was truncated).
    startOffsets.values().removeIf(o -> o >= startOffset);
    startOffsets.put(epoch, startOffset);
    return true;
  }

  int latestEpoch() {
    return startOffsets.isEmpty() ? RecordBatch.NO_PARTITION_LEADER_EPOCH : startOffsets.lastKey();
  }

  /**
   * For OffsetForLeaderEpoch, with Kafka's semantics: the latest epoch ends at {@code
   * logEndOffset}; an older one is answered with the largest epoch at most it and the start of the
   * next epoch; one older than the whole history with itself and the start of the first epoch (the
   * data before is gone); and one newer than the latest, or any epoch with no history, with {@code
   * (-1, -1)}.
   */
  EpochEndOffset endOffsetFor(int requestedEpoch, long logEndOffset) {
    if (requestedEpoch == RecordBatch.NO_PARTITION_LEADER_EPOCH) {
      return EpochEndOffset.UNDEFINED;
    }
    if (requestedEpoch == latestEpoch()) {
      return new EpochEndOffset(requestedEpoch, logEndOffset);
    }
    Map.Entry<Integer, Long> higher = startOffsets.higherEntry(requestedEpoch);
    if (higher == null) {
      return EpochEndOffset.UNDEFINED;
    }
    Map.Entry<Integer, Long> floor = startOffsets.floorEntry(requestedEpoch);
    return new EpochEndOffset(floor == null ? requestedEpoch : floor.getKey(), higher.getValue());
  }

  /** Drops epochs that start at or after {@code endOffset}, after the log was truncated there. */
  void truncateFromEnd(long endOffset) throws IOException {
    if (removeFrom(endOffset)) {
      persist();
    }
  }

  /**
   * Drops epochs that end at or before {@code startOffset}, and moves the start of the epoch that
   * holds it up to it, after the log start offset advanced.
   */
  void truncateFromStart(long startOffset) throws IOException {
    if (startAt(startOffset)) {
      persist();
    }
  }

  /** At load: fits the history to the log's offsets, without writing it. */
  void trimToLog(long logStartOffset, long logEndOffset) {
    boolean changed = removeFrom(logEndOffset);
    changed |= startAt(logStartOffset);
    unwritten |= changed;
  }

  /**
   * Before the log grows: writes what {@link #trimToLog} or {@link #startEpoch} changed, if not
   * written since.
   */
  void writeIfChanged() throws IOException {
    if (unwritten) {
      persist();
    }
  }

  private boolean removeFrom(long endOffset) {
    return startOffsets.values().removeIf(start -> start >= endOffset);
  }

  private boolean startAt(long startOffset) {
    Map.Entry<Integer, Long> holding = null;
    for (Map.Entry<Integer, Long> entry : startOffsets.entrySet()) {
      if (entry.getValue() <= startOffset) {
        holding = entry;
      }
    }
    if (holding == null) {
      return false;
    }
    int epoch = holding.getKey();
    boolean changed = holding.getValue() != startOffset || startOffsets.firstKey() != epoch;
    if (changed) {
      startOffsets.headMap(epoch, false).clear();
      startOffsets.put(epoch, startOffset);
    }
    return changed;
  }

  void clear() throws IOException {
    startOffsets.clear();
    persist();
  }

  List<EpochEntry> entries() {
    List<EpochEntry> entries = new ArrayList<>();
    startOffsets.forEach((epoch, offset) -> entries.add(new EpochEntry(epoch, offset)));
    return entries;
  }

  private void persist() throws IOException {
    checkpoint.write(entries().stream().map(e -> e.epoch() + " " + e.startOffset()).toList());
    unwritten = false;
  }

  /** An epoch and the first offset written in it. */
  record EpochEntry(int epoch, long startOffset) {}
}
