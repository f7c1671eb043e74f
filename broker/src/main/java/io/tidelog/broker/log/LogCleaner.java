package io.tidelog.broker.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecords.FilterResult;
import org.apache.kafka.common.record.MemoryRecords.RecordFilter;
import org.apache.kafka.common.record.MemoryRecords.RecordFilter.BatchRetention;
import org.apache.kafka.common.record.MemoryRecords.RecordFilter.BatchRetentionResult;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Log compaction ({@code cleanup.policy=compact}), as Kafka's {@code LogCleaner} does it: keeps the
 * latest record of every key and drops the older ones, preserving offsets (so a compacted log has
 * gaps, which readers step over).
 *
 * <p>A pass over a log:
 *
 * <ol>
 *   <li>{@link #plan}, on the log's thread: the cleanable part runs from the log start to the
 *       active segment, or to the first segment holding a record younger than {@code
 *       min.compaction.lag.ms}, or to the segment holding the first offset of a transaction not yet
 *       decided (Kafka's first unstable offset). Its dirty part starts at the log's cleaner
 *       checkpoint (the end of the last pass). A pass runs when dirty bytes are at least {@code
 *       min.cleanable.dirty.ratio} of the cleanable bytes, or when the tombstones that the last
 *       pass kept have reached their delete horizon (KIP-534).
 *   <li>{@link #clean}, on the cleaner's thread: maps each key of the dirty part to its latest
 *       offset ({@link OffsetMap}, bounded by {@code log.cleaner.dedupe.buffer.size}; when it
 *       fills, the pass ends at the segment where it did), then rewrites each cleanable segment
 *       into {@code .cleaned/} with kafka-clients' {@link MemoryRecords#filterTo}: records
 *       superseded by a later one of their key go (a record of an aborted transaction supersedes
 *       nothing: the map skips them, as Kafka's does), and so do the records of aborted
 *       transactions; a tombstone goes once its batch's delete horizon ({@code delete.retention.ms}
 *       after the pass that first kept it) has passed, and so does a commit marker whose
 *       transaction's records are gone, and an abort marker likewise (the cleaned segment's
 *       transaction index names the aborts whose markers stay); the last batch of each idempotent
 *       producer stays, empty if need be, so that its sequence survives. Reads are throttled to
 *       {@code log.cleaner.io.max.bytes.per.second}.
 *   <li>{@link #swap}, on the log's thread: each cleaned segment replaces the one it was made from,
 *       if that one is still in the log; the cleaner checkpoint moves to the pass's end.
 * </ol>
 *
 * <p>The active segment is never touched. A cleaned segment has its original's base offset and
 * replaces it file by file with atomic renames: after a crash at any point the directory holds
 * either the original or the cleaned {@code .log} (indexes that went missing are rebuilt), and
 * {@code .cleaned/} is deleted at load.
 */
public final class LogCleaner implements AutoCloseable {
  static final String CLEANED_DIR = ".cleaned";

  private static final Logger LOG = LoggerFactory.getLogger(LogCleaner.class);
  private static final int READ_BUFFER_BYTES = 1024 * 1024;
  private static final int MIN_MAP_SLOTS = 1024;

  /** A dirty record takes at least this much space on disk; sizes the map of a pass. */
  private static final int MIN_RECORD_BYTES = 16;

  private static final int QUEUE_CAPACITY = 10_000;

  private final int maxMapSlots;
  private final double ioMaxBytesPerSecond;
  private final Time time;
  private final ExecutorService thread =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.MILLISECONDS,
          new ArrayBlockingQueue<>(QUEUE_CAPACITY),
          r -> new Thread(r, "tidelog-log-cleaner"));

  /**
   * @param dedupeBufferBytes {@code log.cleaner.dedupe.buffer.size}
   * @param ioMaxBytesPerSecond {@code log.cleaner.io.max.bytes.per.second}
   */
  public LogCleaner(long dedupeBufferBytes, double ioMaxBytesPerSecond, Time time) {
    this.maxMapSlots =
        (int)
            Math.max(
                MIN_MAP_SLOTS,
                Math.min(Integer.MAX_VALUE - 8, dedupeBufferBytes / OffsetMap.BYTES_PER_ENTRY));
    this.ioMaxBytesPerSecond = ioMaxBytesPerSecond;
    this.time = time;
  }

  /** One pass over a log, as {@link #plan} chose it. */
  public static final class Task {
    final PartitionLog log;
    final LogConfig config;
    final List<LogSegment> segments;
    final long firstDirtyOffset;
    final long endOffset;
    final long dirtyBytes;
    final long nowMs;
    final Map<Long, Long> lastOffsetsOfProducers;
    final List<AbortedTxn> abortedTxns;

    private Task(
        PartitionLog log,
        LogConfig config,
        List<LogSegment> segments,
        long firstDirtyOffset,
        long endOffset,
        long dirtyBytes,
        long nowMs,
        Map<Long, Long> lastOffsetsOfProducers,
        List<AbortedTxn> abortedTxns) {
      this.log = log;
      this.config = config;
      this.segments = segments;
      this.firstDirtyOffset = firstDirtyOffset;
      this.endOffset = endOffset;
      this.dirtyBytes = dirtyBytes;
      this.nowMs = nowMs;
      this.lastOffsetsOfProducers = lastOffsetsOfProducers;
      this.abortedTxns = abortedTxns;
    }
  }

  /** A cleaned copy of one segment, in {@code .cleaned/}. */
  record CleanedSegment(LogSegment original, Path directory) {}

  /** What {@link #clean} made: cleaned segments, and where the next pass's dirty part starts. */
  public record Result(
      List<CleanedSegment> cleaned, long nextDirtyOffset, int keys, boolean keptTombstones) {}

  /** On the log's thread: the pass this log is due, if any. */
  public Optional<Task> plan(PartitionLog log, long nowMs) {
    LogConfig config = log.config();
    if (!config.compactEnabled() || log.isOffline()) {
      return Optional.empty();
    }
    LogSegments segments = log.segments();
    long firstDirty = Math.max(log.firstDirtyOffset(), log.logStartOffset());
    long end = segments.active().baseOffset();
    long firstUnstable = log.firstUnstableOffset();
    if (firstUnstable < end) {
      end = segments.baseOffsetHolding(firstUnstable);
    }
    for (LogSegment segment : segments.below(end)) {
      long largestTimestampMs = segment.maxTimestampSoFar(); // none when it holds no record
      if (largestTimestampMs >= 0 && nowMs - largestTimestampMs < config.minCompactionLagMs()) {
        end = segment.baseOffset();
        break;
      }
    }
    List<LogSegment> cleanable = new ArrayList<>();
    long cleanBytes = 0;
    long dirtyBytes = 0;
    long earliestDirtyMs = Long.MAX_VALUE;
    for (LogSegment segment : segments.below(end)) {
      long segmentEnd = segments.endOffsetOf(segment, log.logEndOffset());
      if (segmentEnd <= log.logStartOffset()) {
        continue; // retention deletes it
      }
      cleanable.add(segment);
      if (segmentEnd <= firstDirty) {
        cleanBytes += segment.sizeInBytes();
      } else {
        dirtyBytes += segment.sizeInBytes();
        long first = segment.firstBatchTimestamp();
        if (first > 0) {
          earliestDirtyMs = Math.min(earliestDirtyMs, first);
        }
      }
    }
    boolean tombstonesDue = log.deleteHorizonMs() >= 0 && log.deleteHorizonMs() <= nowMs;
    boolean dirtyEnough =
        dirtyBytes > 0
            && (double) dirtyBytes / (cleanBytes + dirtyBytes) >= config.minCleanableDirtyRatio();
    // KIP-354: a dirty record older than max.compaction.lag.ms is cleaned whatever the ratio
    boolean lagDue = dirtyBytes > 0 && earliestDirtyMs < nowMs - config.maxCompactionLagMs();
    if (cleanable.isEmpty() || !(dirtyEnough || tombstonesDue || lagDue)) {
      return Optional.empty();
    }
    return Optional.of(
        new Task(
            log,
            config,
            List.copyOf(cleanable),
            firstDirty,
            end,
            dirtyBytes,
            nowMs,
            log.lastOffsetsOfProducers(),
            log.abortedTransactions(cleanable.get(0).baseOffset(), end)));
  }

  /** Cleans on the cleaner's thread; fails when it is busy with too many logs. */
  public CompletableFuture<Result> clean(Task task) {
    try {
      return CompletableFuture.supplyAsync(
          () -> {
            try {
              return cleanNow(task);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          },
          thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private Result cleanNow(Task task) throws IOException {
    long startMs = time.milliseconds();
    int slots =
        (int) Math.max(MIN_MAP_SLOTS, Math.min(maxMapSlots, task.dirtyBytes / MIN_RECORD_BYTES));
    OffsetMap map = new OffsetMap(slots);
    Throttle throttle = new Throttle();
    long mapEnd = buildOffsetMap(task, map, throttle);
    KeepLatest filter = new KeepLatest(task, map);
    Path directory = task.log.dir().resolve(CLEANED_DIR);
    Files.createDirectories(directory);
    List<CleanedSegment> cleaned = new ArrayList<>();
    long bytesBefore = 0;
    long bytesAfter = 0;
    for (LogSegment segment : task.segments) {
      if (segment.baseOffset() >= mapEnd) {
        break;
      }
      LogSegment copy = cleanSegment(task, segment, filter, directory, throttle);
      bytesBefore += segment.sizeInBytes();
      bytesAfter += copy.sizeInBytes();
      copy.close();
      cleaned.add(new CleanedSegment(segment, directory));
    }
    LOG.info(
        "{}: cleaned {} segments up to offset {} ({} keys): {} bytes to {} in {} ms",
        task.log.topicPartition(),
        cleaned.size(),
        mapEnd,
        map.size(),
        bytesBefore,
        bytesAfter,
        time.milliseconds() - startMs);
    return new Result(cleaned, mapEnd, map.size(), filter.tombstonesKept > 0);
  }

  /** Maps the dirty part's keys; returns where the map ends (short of the task's end when full). */
  private long buildOffsetMap(Task task, OffsetMap map, Throttle throttle) throws IOException {
    boolean mappedASegment = false;
    CleanedTransactions transactions = new CleanedTransactions(task.abortedTxns);
    for (int i = 0; i < task.segments.size(); i++) {
      LogSegment segment = task.segments.get(i);
      long segmentEnd =
          i + 1 < task.segments.size() ? task.segments.get(i + 1).baseOffset() : task.endOffset;
      if (segmentEnd <= task.firstDirtyOffset) {
        continue; // wholly clean: no need to read it
      }
      boolean dirty = false;
      for (RecordBatch batch : segment.batches()) {
        if (batch.isControlBatch()) {
          transactions.markerDiscardable(batch); // it holds no key to map
          continue;
        }
        if (transactions.aborted(batch) || batch.lastOffset() < task.firstDirtyOffset) {
          continue;
        }
        dirty = true;
        for (Record record : batch) {
          if (record.offset() >= task.firstDirtyOffset
              && record.hasKey()
              && !map.put(record.key(), record.offset())) {
            if (!mappedASegment) {
              throw new IllegalStateException(
                  task.log.topicPartition()
                      + ": log.cleaner.dedupe.buffer.size holds fewer keys than one segment has");
            }
            return segment.baseOffset();
          }
        }
      }
      mappedASegment |= dirty;
      throttle.maybeWait(segment.sizeInBytes());
    }
    return task.endOffset;
  }

  private LogSegment cleanSegment(
      Task task, LogSegment segment, KeepLatest filter, Path directory, Throttle throttle)
      throws IOException {
    for (String suffix :
        List.of(
            LogSegment.LOG_SUFFIX,
            LogSegment.INDEX_SUFFIX,
            LogSegment.TIME_INDEX_SUFFIX,
            LogSegment.TXN_INDEX_SUFFIX)) {
      Files.deleteIfExists(LogSegment.file(directory, segment.baseOffset(), suffix));
    }
    LogSegment copy = LogSegment.open(directory, segment.baseOffset(), task.config, task.nowMs);
    FileRecords source = segment.records();
    ByteBuffer read = ByteBuffer.allocate(READ_BUFFER_BYTES);
    int position = 0;
    while (position < source.sizeInBytes()) {
      read.clear();
      source.readInto(read, position);
      MemoryRecords chunk = MemoryRecords.readableRecords(read);
      if (!chunk.batchIterator().hasNext()) {
        read = ByteBuffer.allocate(Math.max(read.capacity() * 2, nextBatchBytes(read)));
        continue; // a batch larger than the buffer: read it whole
      }
      FilterResult result =
          chunk.filterTo(filter, ByteBuffer.allocate(read.capacity()), BufferSupplier.NO_CACHING);
      position += result.bytesRead();
      ByteBuffer output = result.outputBuffer();
      output.flip();
      if (output.hasRemaining()) {
        MemoryRecords kept = MemoryRecords.readableRecords(output);
        long lastOffset = -1;
        for (RecordBatch batch : kept.batches()) {
          lastOffset = batch.lastOffset();
        }
        copy.append(lastOffset, kept);
      }
      throttle.maybeWait(result.bytesRead());
    }
    for (AbortedTxn aborted : filter.transactions.takeRetainedAborts()) {
      copy.recordAbortedTxn(aborted);
    }
    copy.flush(); // the transaction index too, while it is open
    copy.onBecomeInactiveSegment();
    copy.flush();
    return copy;
  }

  /** The size of the batch at the start of {@code buffer}, from its length field. */
  private static int nextBatchBytes(ByteBuffer buffer) {
    return buffer.limit() >= 12 ? buffer.getInt(8) + 12 : 2 * buffer.capacity();
  }

  /**
   * On the log's thread: puts the cleaned segments in place of their originals, those still in the
   * log, and moves the log's cleaner checkpoint.
   *
   * @throws IOException when a rename fails; the log's directory then goes offline
   */
  public void swap(Task task, Result result) throws IOException {
    int swapped = 0;
    for (CleanedSegment cleaned : result.cleaned()) {
      if (task.log.replaceSegment(cleaned.original(), cleaned.directory())) {
        swapped++;
      }
    }
    if (swapped == result.cleaned().size()) {
      task.log.updateFirstDirtyOffset(result.nextDirtyOffset());
      task.log.updateDeleteHorizonMs(
          result.keptTombstones() ? task.nowMs + task.config.deleteRetentionMs() : -1);
    }
  }

  /** Kafka's retention rule for a compacted log, over the map of latest offsets. */
  private static final class KeepLatest extends RecordFilter {
    private final OffsetMap map;
    private final Map<Long, Long> lastOffsetsOfProducers;
    private final CleanedTransactions transactions;
    private boolean discardRecords;
    private int tombstonesKept;

    KeepLatest(Task task, OffsetMap map) {
      super(task.nowMs, task.config.deleteRetentionMs());
      this.map = map;
      this.lastOffsetsOfProducers = task.lastOffsetsOfProducers;
      this.transactions = new CleanedTransactions(task.abortedTxns);
    }

    /**
     * An aborted transaction's records go; a marker that may go is stamped with a delete horizon
     * and goes once it passed, as a tombstone does. A producer's last batch stays, empty if need
     * be, so that its sequence survives.
     */
    @Override
    protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
      boolean marker = batch.isControlBatch();
      boolean discardable =
          marker ? transactions.markerDiscardable(batch) : transactions.aborted(batch);
      OptionalLong horizon = batch.deleteHorizonMs();
      discardRecords =
          discardable && (!marker || horizon.isPresent() && horizon.getAsLong() <= currentTime);
      if (marker && discardable && !discardRecords) {
        tombstonesKept++; // a pass must come back for it
      }
      boolean lastOfProducer =
          batch.hasProducerId()
              && lastOffsetsOfProducers.getOrDefault(batch.producerId(), -1L) == batch.lastOffset();
      BatchRetention retention =
          lastOfProducer
              ? BatchRetention.RETAIN_EMPTY
              : discardRecords ? BatchRetention.DELETE : BatchRetention.DELETE_EMPTY;
      return new BatchRetentionResult(retention, marker && discardable);
    }

    @Override
    protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
      if (discardRecords) {
        return false;
      }
      if (!record.hasKey() || batch.isControlBatch()) {
        return true;
      }
      if (map.get(record.key()) > record.offset()) {
        return false;
      }
      if (record.hasValue()) {
        return true;
      }
      OptionalLong deleteHorizonMs = batch.deleteHorizonMs();
      boolean keep = deleteHorizonMs.isEmpty() || deleteHorizonMs.getAsLong() > currentTime;
      if (keep) {
        tombstonesKept++;
      }
      return keep;
    }
  }

  /**
   * What a pass learns of transactions, batch by batch in offset order, as Kafka's {@code
   * CleanedTransactionMetadata}: from an aborted transaction's first offset (from the transaction
   * index) its producer's transactional batches belong to it until its abort marker; any other
   * transactional batch belongs to a committed transaction, until that producer's commit marker.
   */
  private static final class CleanedTransactions {
    private final PriorityQueue<AbortedTxn> pending =
        new PriorityQueue<>((a, b) -> Long.compare(a.firstOffset(), b.firstOffset()));

    /** Each producer's aborted transaction under way, and whether the pass met a batch of it. */
    private final Map<Long, AbortedInPass> ongoingAborted = new HashMap<>();

    private final Set<Long> ongoingCommitted = new HashSet<>();

    /** The aborts whose markers stay, since the last {@link #takeRetainedAborts}. */
    private List<AbortedTxn> retainedAborts = new ArrayList<>();

    CleanedTransactions(List<AbortedTxn> aborted) {
      pending.addAll(aborted);
    }

    /** A data batch: whether it belongs to an aborted transaction (its records may go). */
    boolean aborted(RecordBatch batch) {
      startUpTo(batch.lastOffset());
      if (!batch.isTransactional()) {
        return false;
      }
      AbortedInPass aborted = ongoingAborted.get(batch.producerId());
      if (aborted != null) {
        aborted.metABatch = true;
        return true;
      }
      ongoingCommitted.add(batch.producerId());
      return false;
    }

    /**
     * A marker: whether it may go once its delete horizon passed, as in Kafka: when this pass met
     * no batch of its transaction (they went in earlier passes). An abort marker that stays is
     * named again in the cleaned segment's transaction index.
     */
    boolean markerDiscardable(RecordBatch marker) {
      startUpTo(marker.lastOffset());
      Iterator<Record> records = marker.iterator();
      if (!records.hasNext()) {
        return true; // emptied before
      }
      ControlRecordType type = ControlRecordType.parse(records.next().key());
      if (type == ControlRecordType.ABORT) {
        AbortedInPass aborted = ongoingAborted.remove(marker.producerId());
        if (aborted != null && aborted.metABatch) {
          retainedAborts.add(aborted.txn);
          return false;
        }
        return true;
      }
      return type == ControlRecordType.COMMIT && !ongoingCommitted.remove(marker.producerId());
    }

    /** The aborts whose markers stay in the segment just cleaned, for its transaction index. */
    List<AbortedTxn> takeRetainedAborts() {
      List<AbortedTxn> taken = retainedAborts;
      retainedAborts = new ArrayList<>();
      return taken;
    }

    private void startUpTo(long offset) {
      while (!pending.isEmpty() && pending.peek().firstOffset() <= offset) {
        AbortedTxn txn = pending.poll();
        ongoingAborted.putIfAbsent(txn.producerId(), new AbortedInPass(txn));
      }
    }

    private static final class AbortedInPass {
      final AbortedTxn txn;
      boolean metABatch;

      AbortedInPass(AbortedTxn txn) {
        this.txn = txn;
      }
    }
  }

  /** Keeps the cleaner's reads under {@code log.cleaner.io.max.bytes.per.second}. */
  private final class Throttle {
    private final long startNs = time.nanoseconds();
    private long bytes;

    void maybeWait(long moreBytes) {
      bytes += moreBytes;
      if (ioMaxBytesPerSecond >= Double.MAX_VALUE) {
        return;
      }
      long dueNs = (long) (bytes / ioMaxBytesPerSecond * 1e9);
      long aheadNs = dueNs - (time.nanoseconds() - startNs);
      if (aheadNs > 0) {
        time.sleep(TimeUnit.NANOSECONDS.toMillis(aheadNs));
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    thread.shutdownNow();
    thread.awaitTermination(10, TimeUnit.SECONDS);
  }
}
