package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;

/**
 * The idempotent producers of one partition, as Kafka keeps them: for each producer id its epoch
 * and its last {@value #BATCHES_KEPT} batches (sequence range and offsets). A retried batch that
 * was already appended is recognized and answered with its original offsets; a sequence gap is
 * refused.
 *
 * <p>Persistence is a snapshot plus the log: {@code <20-digit offset>.snapshot} files (a {@link
 * CheckpointFile} of {@code producerId epoch firstSequence lastSequence firstOffset lastOffset
 * appendedMs} lines) hold the state as of that offset, written when a segment rolls and when the
 * log closes; on load the newest snapshot at or below the log end offset is read and the batches
 * after it are replayed from the log.
 *
 * <p>Producers whose last append is older than {@code producer.id.expiration.ms} are forgotten,
 * which bounds the table. Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
final class ProducerStateManager {
  static final int BATCHES_KEPT = 5;
  static final String SNAPSHOT_SUFFIX = ".snapshot";
  private static final int SNAPSHOTS_KEPT = 2;

  private final Path dir;
  private final Map<Long, ProducerEntry> producers = new HashMap<>();

  /** The offset of a snapshot file that holds exactly the table, or {@link #NO_SNAPSHOT}. */
  private long snapshotOfTable = NO_SNAPSHOT;

  private static final long NO_SNAPSHOT = -1;

  ProducerStateManager(Path dir) {
    this.dir = dir;
  }

  /**
   * Checks the producer batches of an append against the table.
   *
   * @return the original batch, when {@code records} is a single batch appended before
   * @throws InvalidProducerEpochException when a batch carries an older producer epoch
   * @throws OutOfOrderSequenceException when a base sequence does not follow the last one
   */
  Optional<BatchMetadata> check(MemoryRecords records) {
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

  /** Records an appended batch, whose offsets are final. */
  void update(RecordBatch batch, long appendedMs) {
    if (!batch.hasProducerId()) {
      return;
    }
    snapshotOfTable = NO_SNAPSHOT;
    ProducerEntry entry =
        producers.computeIfAbsent(
            batch.producerId(), id -> new ProducerEntry(batch.producerEpoch()));
    entry.add(
        batch.producerEpoch(),
        new BatchMetadata(
            batch.baseSequence(),
            batch.lastSequence(),
            batch.baseOffset(),
            batch.lastOffset(),
            appendedMs));
  }

  /** Each producer's id to the last offset of its last batch. */
  /** The producers the table holds now, by producer id. */
  List<ActiveProducer> activeProducers() {
    List<ActiveProducer> active = new ArrayList<>();
    new TreeMap<>(producers)
        .forEach(
            (id, entry) ->
                active.add(
                    new ActiveProducer(
                        id, entry.epoch, entry.lastSequence(), entry.lastAppendedMs())));
    return active;
  }

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
    if (producers.values().removeIf(entry -> nowMs - entry.lastAppendedMs() >= expirationMs)) {
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
        (id, entry) ->
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
                            + b.appendedMs())));
    new CheckpointFile(snapshotFile(offset)).write(lines);
    snapshotOfTable = offset;
    TreeMap<Long, Path> snapshots = snapshots();
    while (snapshots.size() > SNAPSHOTS_KEPT) {
      Files.deleteIfExists(snapshots.pollFirstEntry().getValue());
    }
  }

  /**
   * Empties the table, deletes snapshots past {@code logEndOffset}, and loads the newest one left.
   *
   * @return the offset from which the log must be replayed to complete the table
   */
  long loadSnapshotAtOrBelow(long logEndOffset, long logStartOffset) throws IOException {
    producers.clear();
    snapshotOfTable = NO_SNAPSHOT;
    TreeMap<Long, Path> snapshots = snapshots();
    for (Path stale : snapshots.tailMap(logEndOffset, false).values()) {
      Files.delete(stale);
    }
    Map.Entry<Long, Path> newest = snapshots.floorEntry(logEndOffset);
    if (newest == null || newest.getKey() < logStartOffset) {
      return logStartOffset;
    }
    for (String line : new CheckpointFile(newest.getValue()).read()) {
      String[] f = line.split(" ");
      try {
        long id = Long.parseLong(f[0]);
        short epoch = Short.parseShort(f[1]);
        producers
            .computeIfAbsent(id, k -> new ProducerEntry(epoch))
            .add(
                epoch,
                new BatchMetadata(
                    Integer.parseInt(f[2]),
                    Integer.parseInt(f[3]),
                    Long.parseLong(f[4]),
                    Long.parseLong(f[5]),
                    Long.parseLong(f[6])));
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

  /** A producer's epoch and its last batches, oldest first. */
  private static final class ProducerEntry {
    private short epoch;
    private final ArrayDeque<BatchMetadata> batches = new ArrayDeque<>(BATCHES_KEPT);

    ProducerEntry(short epoch) {
      this.epoch = epoch;
    }

    void add(short batchEpoch, BatchMetadata batch) {
      if (batchEpoch != epoch) {
        batches.clear();
        epoch = batchEpoch;
      }
      if (batches.size() == BATCHES_KEPT) {
        batches.removeFirst();
      }
      batches.addLast(batch);
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

    long lastAppendedMs() {
      return batches.isEmpty() ? Long.MIN_VALUE : batches.getLast().appendedMs();
    }
  }
}
