package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.CompletedTxn;

/**
 * The idempotent producers of one partition, as Kafka keeps them: for each producer id its epoch
 * and its last {@value #BATCHES_KEPT} batches (sequence range and offsets). A retried batch that
 * was already appended is recognized and answered with its original offsets; a sequence gap is
 * refused.
 *
 * <p>Transactions, as Kafka's {@code ProducerStateManager} tracks them: a producer's first
 * transactional batch opens its transaction at that offset, and its commit or abort marker (a
 * control batch the coordinator has the leader write) closes it, giving a {@link CompletedTxn}. The
 * first offset of every open transaction, and of every closed one whose marker the high watermark
 * has not passed yet, bounds the last stable offset: a {@code read_committed} consumer reads
 * nothing at or past it.
 *
 * <p>Persistence is a snapshot plus the log: {@code <20-digit offset>.snapshot} files (a {@link
 * CheckpointFile} of {@code producerId epoch firstSequence lastSequence firstOffset lastOffset
 * appendedMs coordinatorEpoch currentTxnFirstOffset} lines, one per remembered batch, or one with
 * sequences and offsets of -1 for a producer that has none since its last marker) hold the state as
 * of that offset, written when a segment rolls and when the log closes; on load the newest snapshot
 * at or below the log end offset is read and the batches after it are replayed from the log.
 * Snapshots of seven fields, written before transactions, are read as producers in none.
 *
 * <p>Producers whose last append is older than {@code producer.id.expiration.ms} are forgotten,
 * unless they have a transaction open, which bounds the table. Not thread-safe: the owning {@link
 * PartitionLog}'s thread calls it.
 */
final class ProducerStateManager {
  static final int BATCHES_KEPT = 5;
  static final String SNAPSHOT_SUFFIX = ".snapshot";
  private static final int SNAPSHOTS_KEPT = 2;

  private final Path dir;
  private final Map<Long, ProducerEntry> producers = new HashMap<>();

  /** Open transactions: first offset to producer id. */
  private final TreeMap<Long, Long> ongoingTxns = new TreeMap<>();

  /** Closed transactions whose marker is not below the high watermark: first to last offset. */
  private final TreeMap<Long, Long> unreplicatedTxns = new TreeMap<>();

  /** The offset of a snapshot file that holds exactly the table, or {@link #NO_SNAPSHOT}. */
  private long snapshotOfTable = NO_SNAPSHOT;

  private static final long NO_SNAPSHOT = -1;

  ProducerStateManager(Path dir) {
    this.dir = dir;
  }

  /**
   * Checks the producer batches of an append against the table.
   *
   * @param origin a {@link AppendOrigin#COORDINATOR}'s batches are checked for their epoch only
   * @return the original batch, when {@code records} is a single batch appended before
   * @throws InvalidProducerEpochException when a batch carries an older producer epoch
   * @throws OutOfOrderSequenceException when a base sequence does not follow the last one
   */
  Optional<BatchMetadata> check(MemoryRecords records, AppendOrigin origin) {
    if (origin == AppendOrigin.COORDINATOR) {
      for (RecordBatch batch : records.batches()) {
        ProducerEntry entry = batch.hasProducerId() ? producers.get(batch.producerId()) : null;
        if (entry != null && batch.producerEpoch() < entry.epoch) {
          throw new InvalidProducerEpochException(
              "Producer "
                  + batch.producerId()
                  + " epoch "
                  + batch.producerEpoch()
                  + " is older than the current epoch "
                  + entry.epoch);
        }
      }
      return Optional.empty();
    }
    List<RecordBatch> batches = new ArrayList<>();
    records.batches().forEach(batches::add);
    Map<Long, int[]> pending = new HashMap<>(); // producer id -> {epoch, last sequence}
    for (RecordBatch batch : batches) {
      if (!batch.hasProducerId()) {
        continue;
      }
      int[] last = pending.get(batch.producerId());
      ProducerEntry entry = producers.get(batch.producerId());
      if (last == null && entry != null) {
        Optional<BatchMetadata> duplicate =
            batch.producerEpoch() == entry.epoch ? entry.find(batch) : Optional.empty();
        if (duplicate.isPresent()) {
          if (batches.size() == 1) {
            return duplicate;
          }
          throw new OutOfOrderSequenceException(
              "Producer "
                  + batch.producerId()
                  + " resent sequence "
                  + batch.baseSequence()
                  + " together with other batches");
        }
        last = new int[] {entry.epoch, entry.lastSequence()};
      }
      if (last != null) {
        checkFollows(batch, (short) last[0], last[1]);
      }
      if (entry != null && entry.currentTxnFirstOffset >= 0 && !batch.isTransactional()) {
        throw new InvalidTxnStateException(
            "Producer "
                + batch.producerId()
                + " sent a non-transactional batch while its transaction from offset "
                + entry.currentTxnFirstOffset
                + " is open");
      }
      pending.put(batch.producerId(), new int[] {batch.producerEpoch(), batch.lastSequence()});
    }
    return Optional.empty();
  }

  private static void checkFollows(RecordBatch batch, short epoch, int lastSequence) {
    if (batch.producerEpoch() < epoch) {
      throw new InvalidProducerEpochException(
          "Producer "
              + batch.producerId()
              + " epoch "
              + batch.producerEpoch()
              + " is older than the current epoch "
              + epoch);
    }
    int expected =
        batch.producerEpoch() > epoch
            ? 0
            : lastSequence == Integer.MAX_VALUE ? 0 : lastSequence + 1;
    if (batch.baseSequence() != expected) {
      throw new OutOfOrderSequenceException(
          "Producer "
              + batch.producerId()
              + " epoch "
              + batch.producerEpoch()
              + " sent sequence "
              + batch.baseSequence()
              + " where "
              + expected
              + " was expected");
    }
  }

  /**
   * Checks a transaction marker the coordinator asks to write, as Kafka 4.1's leader does: its
   * producer epoch may not be older than the producer's (KIP-890's coordinator writes it with the
   * epoch it bumped at the transaction's end, newer still), nor its coordinator epoch older than
   * the last marker's.
   *
   * @throws InvalidProducerEpochException for a marker of an older producer epoch
   * @throws TransactionCoordinatorFencedException for a marker from an older coordinator
   */
  void checkMarker(long producerId, short epoch, int coordinatorEpoch) {
    ProducerEntry entry = producers.get(producerId);
    if (entry == null) {
      return;
    }
    if (epoch < entry.epoch) {
      throw new InvalidProducerEpochException(
          "Marker epoch "
              + epoch
              + " of producer "
              + producerId
              + " is older than its epoch "
              + entry.epoch);
    }
    if (coordinatorEpoch < entry.coordinatorEpoch) {
      throw new TransactionCoordinatorFencedException(
          "Marker of producer "
              + producerId
              + " from coordinator epoch "
              + coordinatorEpoch
              + ", older than "
              + entry.coordinatorEpoch);
    }
  }

  /**
   * Records an appended batch, whose offsets are final.
   *
   * @return the transaction that {@code batch}, a commit or abort marker, closed; empty for other
   *     batches, and for a marker of a producer with no transaction open
   */
  Optional<CompletedTxn> update(RecordBatch batch, long appendedMs) {
    if (!batch.hasProducerId()) {
      return Optional.empty();
    }
    snapshotOfTable = NO_SNAPSHOT;
    ProducerEntry entry =
        producers.computeIfAbsent(
            batch.producerId(), id -> new ProducerEntry(batch.producerEpoch()));
    if (batch.isControlBatch()) {
      Iterator<Record> records = batch.iterator();
      if (!records.hasNext()) {
        return Optional.empty(); // the cleaner emptied it
      }
      Record record = records.next();
      EndTransactionMarker marker = EndTransactionMarker.deserialize(record);
      Optional<CompletedTxn> completed =
          entry.currentTxnFirstOffset < 0
              ? Optional.empty()
              : Optional.of(
                  new CompletedTxn(
                      batch.producerId(),
                      entry.currentTxnFirstOffset,
                      batch.baseOffset(),
                      marker.controlType() == ControlRecordType.ABORT));
      entry.endTransaction(batch.producerEpoch(), marker.coordinatorEpoch(), record.timestamp());
      return completed;
    }
    entry.add(
        batch.producerEpoch(),
        new BatchMetadata(
            batch.baseSequence(),
            batch.lastSequence(),
            batch.baseOffset(),
            batch.lastOffset(),
            appendedMs));
    if (batch.isTransactional() && entry.currentTxnFirstOffset < 0) {
      entry.currentTxnFirstOffset = batch.baseOffset();
      ongoingTxns.put(batch.baseOffset(), batch.producerId());
    }
    return Optional.empty();
  }

  /**
   * The last stable offset as of {@code completed}'s marker, which Kafka's transaction index keeps
   * beside it: the first offset of the earliest transaction of another producer still open, or the
   * offset after the marker.
   */
  long lastStableOffset(CompletedTxn completed) {
    for (Map.Entry<Long, Long> open : ongoingTxns.entrySet()) {
      if (open.getValue() != completed.producerId) {
        return open.getKey();
      }
    }
    return completed.lastOffset + 1;
  }

  /**
   * Moves a closed transaction out of the open ones, until the high watermark passes its marker.
   */
  void completeTxn(CompletedTxn completed) {
    ongoingTxns.remove(completed.firstOffset);
    unreplicatedTxns.put(completed.firstOffset, completed.lastOffset);
  }

  /** Forgets the closed transactions whose marker lies below {@code highWatermark}. */
  void onHighWatermarkUpdated(long highWatermark) {
    unreplicatedTxns.values().removeIf(lastOffset -> lastOffset < highWatermark);
  }

  /**
   * The first offset of the earliest transaction that is open or whose marker is not yet below the
   * high watermark: the last stable offset may not pass it.
   */
  OptionalLong firstUnstableOffset() {
    Long open = ongoingTxns.isEmpty() ? null : ongoingTxns.firstKey();
    Long unreplicated = unreplicatedTxns.isEmpty() ? null : unreplicatedTxns.firstKey();
    if (open == null && unreplicated == null) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(
        Math.min(
            open == null ? Long.MAX_VALUE : open,
            unreplicated == null ? Long.MAX_VALUE : unreplicated));
  }

  /** The producers the table holds now, by producer id. */
  List<ActiveProducer> activeProducers() {
    List<ActiveProducer> active = new ArrayList<>();
    new TreeMap<>(producers)
        .forEach(
            (id, entry) ->
                active.add(
                    new ActiveProducer(
                        id,
                        entry.epoch,
                        entry.lastSequence(),
                        entry.lastAppendedMs,
                        entry.coordinatorEpoch,
                        entry.currentTxnFirstOffset)));
    return active;
  }

  /** Each producer's id to the last offset of its last batch. */
  Map<Long, Long> lastOffsets() {
    Map<Long, Long> last = new HashMap<>();
    producers.forEach(
        (id, entry) -> {
          if (!entry.batches.isEmpty()) {
            last.put(id, entry.batches.getLast().lastOffset());
          }
        });
    return last;
  }

  void removeExpired(long nowMs, long expirationMs) {
    if (producers
        .values()
        .removeIf(
            entry ->
                entry.currentTxnFirstOffset < 0 && nowMs - entry.lastAppendedMs >= expirationMs)) {
      snapshotOfTable = NO_SNAPSHOT;
    }
  }

  /**
   * Writes the table as of {@code offset}, and keeps only the newest snapshots. A snapshot at
   * {@code offset} that already holds the table is not written again (as Kafka takes one only past
   * its last): a clean shutdown of idle partitions writes nothing.
   */
  void snapshot(long offset) throws IOException {
    if (offset == snapshotOfTable && Files.exists(snapshotFile(offset))) {
      return;
    }
    List<String> lines = new ArrayList<>();
    producers.forEach(
        (id, entry) -> {
          String txn = " " + entry.coordinatorEpoch + " " + entry.currentTxnFirstOffset;
          if (entry.batches.isEmpty()) {
            lines.add(id + " " + entry.epoch + " -1 -1 -1 -1 " + entry.lastAppendedMs + txn);
          }
          entry.batches.forEach(
              b ->
                  lines.add(
                      id
                          + " "
                          + entry.epoch
                          + " "
                          + b.firstSequence()
                          + " "
                          + b.lastSequence()
                          + " "
                          + b.firstOffset()
                          + " "
                          + b.lastOffset()
                          + " "
                          + b.appendedMs()
                          + txn));
        });
    new CheckpointFile(snapshotFile(offset)).write(lines);
    snapshotOfTable = offset;
    TreeMap<Long, Path> snapshots = snapshots();
    while (snapshots.size() > SNAPSHOTS_KEPT) {
      Files.deleteIfExists(snapshots.pollFirstEntry().getValue());
    }
  }

  /**
   * Empties the table, deletes snapshots past {@code logEndOffset}, and loads the newest one left
   * at or below {@code offset}.
   *
   * @return the offset from which the log must be replayed to complete the table
   */
  long loadSnapshotAtOrBelow(long offset, long logEndOffset, long logStartOffset)
      throws IOException {
    producers.clear();
    ongoingTxns.clear();
    unreplicatedTxns.clear();
    snapshotOfTable = NO_SNAPSHOT;
    TreeMap<Long, Path> snapshots = snapshots();
    for (Path stale : snapshots.tailMap(logEndOffset, false).values()) {
      Files.delete(stale);
    }
    Map.Entry<Long, Path> newest = snapshots.floorEntry(Math.min(offset, logEndOffset));
    if (newest == null || newest.getKey() < logStartOffset) {
      return logStartOffset;
    }
    for (String line : new CheckpointFile(newest.getValue()).read()) {
      String[] f = line.split(" ");
      try {
        long id = Long.parseLong(f[0]);
        short epoch = Short.parseShort(f[1]);
        ProducerEntry entry = producers.computeIfAbsent(id, k -> new ProducerEntry(epoch));
        long firstOffset = Long.parseLong(f[4]);
        long appendedMs = Long.parseLong(f[6]);
        if (firstOffset >= 0) {
          entry.add(
              epoch,
              new BatchMetadata(
                  Integer.parseInt(f[2]),
                  Integer.parseInt(f[3]),
                  firstOffset,
                  Long.parseLong(f[5]),
                  appendedMs));
        }
        entry.lastAppendedMs = Math.max(entry.lastAppendedMs, appendedMs);
        if (f.length > 7) {
          entry.coordinatorEpoch = Integer.parseInt(f[7]);
          entry.currentTxnFirstOffset = Long.parseLong(f[8]);
          if (entry.currentTxnFirstOffset >= 0) {
            ongoingTxns.put(entry.currentTxnFirstOffset, id);
          }
        }
      } catch (RuntimeException e) {
        throw new IOException(
            "malformed producer snapshot line '" + line + "' in " + newest.getValue(), e);
      }
    }
    snapshotOfTable = newest.getKey();
    return newest.getKey();
  }

  private Path snapshotFile(long offset) {
    return dir.resolve(String.format("%020d", offset) + SNAPSHOT_SUFFIX);
  }

  private TreeMap<Long, Path> snapshots() throws IOException {
    TreeMap<Long, Path> snapshots = new TreeMap<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SNAPSHOT_SUFFIX)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        snapshots.put(
            Long.parseLong(name.substring(0, name.length() - SNAPSHOT_SUFFIX.length())), file);
      }
    }
    return snapshots;
  }

  /** A batch a producer appended: its sequence range and offsets. */
  record BatchMetadata(
      int firstSequence, int lastSequence, long firstOffset, long lastOffset, long appendedMs) {}

  /**
   * A producer's epoch, its last batches (oldest first), the epoch of the coordinator that wrote
   * its last marker, and the first offset of its open transaction (-1 when none).
   */
  private static final class ProducerEntry {
    private short epoch;
    private final ArrayDeque<BatchMetadata> batches = new ArrayDeque<>(BATCHES_KEPT);
    private int coordinatorEpoch = -1;
    private long currentTxnFirstOffset = -1;
    private long lastAppendedMs = Long.MIN_VALUE;

    ProducerEntry(short epoch) {
      this.epoch = epoch;
    }

    void add(short batchEpoch, BatchMetadata batch) {
      updateEpoch(batchEpoch);
      if (batches.size() == BATCHES_KEPT) {
        batches.removeFirst();
      }
      batches.addLast(batch);
      lastAppendedMs = batch.appendedMs();
    }

    /** A marker closed the open transaction, if any. */
    void endTransaction(short markerEpoch, int markerCoordinatorEpoch, long timestampMs) {
      updateEpoch(markerEpoch);
      coordinatorEpoch = markerCoordinatorEpoch;
      currentTxnFirstOffset = -1;
      lastAppendedMs = timestampMs;
    }

    private void updateEpoch(short newEpoch) {
      if (newEpoch != epoch) {
        batches.clear();
        epoch = newEpoch;
      }
    }

    Optional<BatchMetadata> find(RecordBatch batch) {
      return batches.stream()
          .filter(
              b ->
                  b.firstSequence() == batch.baseSequence()
                      && b.lastSequence() == batch.lastSequence())
          .findFirst();
    }

    int lastSequence() {
      return batches.isEmpty() ? -1 : batches.getLast().lastSequence();
    }
  }
}
