package io.tidelog.broker.log;

import io.tidelog.broker.log.LogSegment.RollParams;
import io.tidelog.broker.log.ProducerStateManager.BatchMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.CompletedTxn;
import org.apache.kafka.storage.internals.log.TxnIndexSearchResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The append-only log of one partition replica: a directory {@code <topic>-<partition>} of {@link
 * LogSegment}s, the leader-epoch cache, and the offsets that bound it.
 *
 * <p>Offsets: {@code logStartOffset} is the first readable offset, {@code logEndOffset} (LEO) the
 * next one to assign, and {@code recoveryPoint} the offset below which everything was fsynced;
 * after a crash only data from the recovery point on is CRC-checked again. The last stable offset
 * (LSO), which bounds {@code read_committed} reads, is the high watermark or, when lower, the first
 * offset of a transaction not yet decided and replicated (see {@link ProducerStateManager}).
 *
 * <p>Durability follows {@code flush.messages} and {@code flush.ms} (see {@link LogConfig}); by
 * default an append is only in the page cache, and replication provides durability. Rolled segments
 * are fsynced in the background so that recovery after a crash scans little.
 *
 * <p>Threading: single writer. Every method except the offset getters must be called from the one
 * thread or ordered context that owns this partition; the getters may be read from anywhere. An I/O
 * error takes the whole log directory offline and every later call fails with {@link
 * KafkaStorageException}; other partitions keep serving.
 */
public final class PartitionLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionLog.class);

  /** Kafka's default {@code producer.id.expiration.ms}. */
  static final long PRODUCER_ID_EXPIRATION_MS = 24 * 60 * 60 * 1000L;

  private final TopicPartition topicPartition;
  private final Path dir;
  private final LogServices services;
  private final LogSegments segments = new LogSegments();
  private final LeaderEpochCache leaderEpochCache;
  private final PartitionMetadataFile partitionMetadata;
  private final LogValidator validator = new LogValidator();
  private final ProducerStateManager producerState;
  private final Object recoveryPointLock = new Object();
  private volatile LogConfig config;
  private volatile long logStartOffset;
  private volatile long logEndOffset;
  private volatile long highWatermark;

  /** The producer state's first unstable offset, or {@code Long.MAX_VALUE}: read by any thread. */
  private volatile long firstUnstableOffset = Long.MAX_VALUE;

  private volatile long firstDirtyOffset;
  private volatile long deleteHorizonMs = -1;
  private volatile boolean offline;
  private long recoveryPoint;
  private long truncations;
  private long unflushedMessages;
  private long lastFlushMs;

  private PartitionLog(
      TopicPartition topicPartition,
      Path dir,
      LogConfig config,
      LogServices services,
      LeaderEpochCache leaderEpochCache) {
    this.topicPartition = topicPartition;
    this.dir = dir;
    this.config = config;
    this.services = services;
    this.leaderEpochCache = leaderEpochCache;
    this.partitionMetadata = new PartitionMetadataFile(dir);
    this.producerState = new ProducerStateManager(dir);
    this.lastFlushMs = services.time().milliseconds();
  }

  /**
   * Opens the log in {@code dir}, creating it when missing, and recovers it: after an unclean
   * shutdown every batch from the recovery point on is CRC-checked and a torn or corrupt tail is
   * truncated; indexes that are missing or inconsistent are rebuilt.
   */
  public static PartitionLog open(Path dir, LogConfig config, LoadState state, LogServices services)
      throws IOException {
    return open(parseTopicPartition(dir.getFileName().toString()), dir, config, state, services);
  }

  /** Opens the log of {@code tp} in {@code dir}, whatever the directory's name, as above. */
  static PartitionLog open(
      TopicPartition tp, Path dir, LogConfig config, LoadState state, LogServices services)
      throws IOException {
    Files.createDirectories(dir);
    PartitionLog log = new PartitionLog(tp, dir, config, services, LeaderEpochCache.load(dir));
    try {
      log.load(state);
    } catch (IOException | RuntimeException e) {
      log.segments.closeHandlers();
      throw e;
    }
    return log;
  }

  /**
   * Parses Kafka's partition directory name, {@code <topic>-<partition>}.
   *
   * @throws IllegalArgumentException when the name is not of that form
   */
  public static TopicPartition parseTopicPartition(String dirName) {
    int dash = dirName.lastIndexOf('-');
    if (dash <= 0 || dash == dirName.length() - 1) {
      throw new IllegalArgumentException("'" + dirName + "' is not a <topic>-<partition> name");
    }
    try {
      int partition = Integer.parseInt(dirName.substring(dash + 1));
      if (partition < 0) {
        throw new IllegalArgumentException("'" + dirName + "' has a negative partition");
      }
      return new TopicPartition(dirName.substring(0, dash), partition);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + dirName + "' is not a <topic>-<partition> name", e);
    }
  }

  private void load(LoadState state) throws IOException {
    logEndOffset =
        new LogLoader(topicPartition, dir, config, segments)
            .load(state, services.time().milliseconds());
    logStartOffset =
        Math.min(Math.max(state.logStartOffset(), segments.firstBaseOffset()), logEndOffset);
    leaderEpochCache.trimToLog(logStartOffset, logEndOffset);
    recoveryPoint = logEndOffset;
    // After a crash the transaction indexes past the recovery point may have missed entries: the
    // replay that rebuilds the producers rebuilds them too, so it starts no later than that.
    rebuildProducerState(state.hadCleanShutdown() ? logEndOffset : state.recoveryPoint());
    // Everything here is flushed now: an idle partition holds no mapping and no file descriptor
    // until a read or an append needs them
    for (LogSegment segment : segments.all()) {
      segment.releaseIndexes();
      segment.releaseFile();
    }
  }

  /**
   * Validates {@code records}, assigns them the next offsets and stamps {@code leaderEpoch} in,
   * then appends them, in the topic's {@code compression.type} when it names a codec. The batches
   * are changed in place, or written again in that codec.
   *
   * @throws org.apache.kafka.common.InvalidRecordException and the other validation errors of
   *     {@link LogValidator#validate}; nothing is written then
   * @throws org.apache.kafka.common.errors.OutOfOrderSequenceException when an idempotent
   *     producer's sequence does not follow its last one
   * @throws KafkaStorageException when the log directory is offline or fails now
   */
  public LogAppendInfo append(MemoryRecords records, int leaderEpoch) {
    return append(records, leaderEpoch, AppendOrigin.CLIENT);
  }

  /**
   * {@link #append(MemoryRecords, int)} for a client or, with {@link AppendOrigin#COORDINATOR}, for
   * a coordinator of this broker: as in Kafka, a coordinator's producer batches (a transaction's
   * offsets) are checked for their epoch but not for their sequence, and are never duplicates.
   */
  public LogAppendInfo append(MemoryRecords records, int leaderEpoch, AppendOrigin origin) {
    checkOnline();
    long nowMs = services.time().milliseconds();
    LogConfig config = this.config;
    LogValidator.Validated validated = validator.validate(records, config, true, nowMs);
    Optional<BatchMetadata> duplicate = producerState.check(records, origin);
    if (duplicate.isPresent()) {
      // A producer retry of a batch already in the log: answer with its offsets, write nothing.
      BatchMetadata original = duplicate.get();
      return new LogAppendInfo(
          original.firstOffset(),
          original.lastOffset(),
          RecordBatch.NO_TIMESTAMP,
          -1L,
          validated.recordCount(),
          0);
    }
    long firstOffset = logEndOffset;
    TimestampType timestampType = config.messageTimestampType();
    MemoryRecords stored = validator.stored(records, config);
    long maxTimestamp =
        LogValidator.assignOffsets(stored, firstOffset, leaderEpoch, timestampType, nowMs);
    return write(
        stored,
        validated,
        maxTimestamp,
        timestampType == TimestampType.LOG_APPEND_TIME ? nowMs : -1L,
        nowMs);
  }

  /**
   * Appends a transaction marker, as the leader does for the transaction coordinator
   * (WriteTxnMarkers): a control batch of {@code producerId} and {@code producerEpoch} that commits
   * or aborts the producer's open transaction here, if any.
   *
   * @throws org.apache.kafka.common.errors.InvalidProducerEpochException for a marker of an older
   *     producer epoch
   * @throws org.apache.kafka.common.errors.TransactionCoordinatorFencedException for a marker of an
   *     older coordinator
   * @throws KafkaStorageException when the log directory is offline or fails now
   */
  public LogAppendInfo appendMarker(
      long producerId, short producerEpoch, EndTransactionMarker marker, int leaderEpoch) {
    checkOnline();
    producerState.checkMarker(producerId, producerEpoch, marker.coordinatorEpoch());
    long nowMs = services.time().milliseconds();
    MemoryRecords records =
        MemoryRecords.withEndTransactionMarker(
            logEndOffset, nowMs, leaderEpoch, producerId, producerEpoch, marker);
    return write(records, new LogValidator.Validated(1), nowMs, -1L, nowMs);
  }

  /**
   * Appends batches that a follower fetched from its leader: they carry their offsets and leader
   * epochs already, are checked as a leader checks them, and start at the log end offset or, where
   * the leader's cleaner removed records, after it.
   *
   * @throws InvalidRecordException when they start below the log end offset
   */
  public LogAppendInfo appendAsFollower(MemoryRecords records) {
    checkOnline();
    long nowMs = services.time().milliseconds();
    LogValidator.Validated validated = validator.validate(records, config, false, nowMs);
    long firstOffset = records.batches().iterator().next().baseOffset();
    if (firstOffset < logEndOffset) {
      throw new InvalidRecordException(
          "Fetched batches start at offset "
              + firstOffset
              + ", below the log end offset "
              + logEndOffset);
    }
    long maxTimestamp = RecordBatch.NO_TIMESTAMP;
    for (RecordBatch batch : records.batches()) {
      maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
    }
    return write(records, validated, maxTimestamp, -1L, nowMs);
  }

  /** Writes batches whose offsets and epochs are set, from the log end offset on. */
  private LogAppendInfo write(
      MemoryRecords records,
      LogValidator.Validated validated,
      long maxTimestamp,
      long logAppendTimeMs,
      long nowMs) {
    long firstOffset = logEndOffset;
    long lastOffset = firstOffset;
    for (var batch : records.batches()) {
      lastOffset = batch.lastOffset();
    }
    LogConfig config = this.config;
    LogSegment segment;
    try {
      partitionMetadata.maybeFlush(); // no record may be durable before the topic id is
      leaderEpochCache.writeIfChanged(); // every epoch of these records is durable before them
      segment =
          maybeRoll(
              new RollParams(
                  records.sizeInBytes(),
                  lastOffset,
                  maxTimestamp,
                  nowMs,
                  config.segmentBytes(),
                  config.maxSegmentMs()));
      segment.append(lastOffset, records);
      for (RecordBatch batch : records.batches()) {
        leaderEpochCache.assign(batch.partitionLeaderEpoch(), batch.baseOffset());
      }
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
    logEndOffset = lastOffset + 1;
    try {
      for (RecordBatch batch : records.batches()) {
        Optional<CompletedTxn> completed = producerState.update(batch, nowMs);
        if (completed.isPresent()) {
          completeTxn(segment, completed.get());
        }
      }
    } catch (IOException e) {
      throw failDirectory(e);
    }
    refreshFirstUnstableOffset();
    unflushedMessages += validated.recordCount();
    maybeFlush(nowMs);
    return new LogAppendInfo(
        firstOffset,
        lastOffset,
        maxTimestamp,
        logAppendTimeMs,
        validated.recordCount(),
        records.sizeInBytes());
  }

  /** Records a closed transaction in the index of the segment holding its marker. */
  private void completeTxn(LogSegment segment, CompletedTxn completed) throws IOException {
    segment.updateTxnIndex(completed, producerState.lastStableOffset(completed));
    producerState.completeTxn(completed);
  }

  private void refreshFirstUnstableOffset() {
    firstUnstableOffset = producerState.firstUnstableOffset().orElse(Long.MAX_VALUE);
  }

  private LogSegment maybeRoll(RollParams params) throws IOException {
    LogSegment active = segments.active();
    if (!active.shouldRoll(params)) {
      return active;
    }
    long newBaseOffset = logEndOffset;
    active.onBecomeInactiveSegment();
    producerState.snapshot(newBaseOffset);
    LogSegment next = LogSegment.open(dir, newBaseOffset, config, params.nowMs());
    segments.add(next);
    LOG.debug("{}: rolled segment {} at offset {}", topicPartition, active, newBaseOffset);
    scheduleFlushBefore(newBaseOffset);
    return next;
  }

  /**
   * Fsyncs every segment below {@code offset} on the flusher, through its own file handles, and
   * then moves the recovery point up, unless the log was truncated meanwhile.
   */
  private void scheduleFlushBefore(long offset) {
    long truncationsAtRoll;
    synchronized (recoveryPointLock) {
      truncationsAtRoll = truncations;
    }
    List<Path> files = new ArrayList<>();
    for (LogSegment segment : segments.below(offset)) {
      long base = segment.baseOffset();
      files.add(LogSegment.file(dir, base, LogSegment.LOG_SUFFIX));
      files.add(LogSegment.file(dir, base, LogSegment.INDEX_SUFFIX));
      files.add(LogSegment.file(dir, base, LogSegment.TIME_INDEX_SUFFIX));
      files.add(LogSegment.file(dir, base, LogSegment.TXN_INDEX_SUFFIX));
    }
    services
        .flusher()
        .execute(
            () -> {
              long startNanos = System.nanoTime();
              try {
                for (Path file : files) {
                  fsync(file);
                }
              } catch (IOException e) {
                if (!offline) {
                  failDirectory(e);
                }
                return;
              }
              services.flushNanos().accept(System.nanoTime() - startNanos);
              synchronized (recoveryPointLock) {
                if (truncations == truncationsAtRoll && offset > recoveryPoint) {
                  recoveryPoint = offset;
                }
              }
            });
  }

  private static void fsync(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (NoSuchFileException e) {
      // Retention or truncation deleted the segment after the roll: nothing left to flush.
    }
  }

  /**
   * Reads whole batches from the one holding {@code startOffset}, at most {@code maxBytes} but
   * always at least one batch, and none that reaches {@code maxOffset} (for a consumer, the high
   * watermark). Reads stay within one segment, as in Kafka.
   *
   * @throws OffsetOutOfRangeException when {@code startOffset} is outside [logStartOffset, LEO]
   * @throws org.apache.kafka.common.errors.CorruptRecordException when a stored batch is corrupt
   * @throws KafkaStorageException when the log directory is offline or fails now
   */
  public LogReadInfo read(long startOffset, int maxBytes, long maxOffset) {
    checkOnline();
    long endOffset = logEndOffset;
    if (startOffset < logStartOffset || startOffset > endOffset) {
      throw new OffsetOutOfRangeException(
          "Offset "
              + startOffset
              + " of "
              + topicPartition
              + " is outside the log, which spans "
              + logStartOffset
              + " to "
              + endOffset);
    }
    long upperOffset = Math.min(maxOffset, endOffset);
    try {
      if (startOffset < upperOffset) {
        for (LogSegment segment : segments.from(startOffset)) {
          long segmentEnd = segments.endOffsetOf(segment, endOffset);
          long bound = upperOffset >= segmentEnd ? Long.MAX_VALUE : upperOffset;
          Optional<LogReadInfo> read = segment.read(startOffset, maxBytes, bound);
          if (read.isPresent()) {
            return read.get();
          }
        }
      }
      return segments.active().emptyRead(startOffset);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    } catch (KafkaException e) {
      if (e.getCause() instanceof IOException io) {
        throw failDirectory(io);
      }
      throw e;
    }
  }

  /** The record with the largest timestamp in the log (ListOffsets MAX_TIMESTAMP, KIP-734). */
  public Optional<TimestampAndOffset> maxTimestampRecord() {
    checkOnline();
    try {
      LogSegment newest = null;
      for (LogSegment segment : segments.all()) {
        if (newest == null || segment.maxTimestampSoFar() > newest.maxTimestampSoFar()) {
          newest = segment;
        }
      }
      return newest == null
          ? Optional.empty()
          : newest.maxTimestampRecord().filter(r -> r.offset >= logStartOffset);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
  }

  /**
   * The first record at or after the log start offset with a timestamp of at least {@code
   * timestamp}, as ListOffsets needs.
   */
  public Optional<TimestampAndOffset> offsetForTimestamp(long timestamp) {
    checkOnline();
    try {
      for (LogSegment segment : segments.all()) {
        if (segment.maxTimestampSoFar() >= timestamp) {
          Optional<TimestampAndOffset> found =
              segment.findOffsetByTimestamp(timestamp, logStartOffset);
          if (found.isPresent()) {
            return found;
          }
        }
      }
      return Optional.empty();
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
  }

  /** For OffsetForLeaderEpoch: the largest epoch at most {@code epoch} and where it ends. */
  public EpochEndOffset endOffsetForEpoch(int epoch) {
    return leaderEpochCache.endOffsetFor(epoch, logEndOffset);
  }

  /**
   * Starts {@code epoch} at the log end offset, as a new leader does before its first append, so
   * that followers of the old epoch find where it ended. Written to the epoch history's file before
   * the log next grows.
   */
  public void assignLeaderEpoch(int epoch) {
    checkOnline();
    leaderEpochCache.startEpoch(epoch, logEndOffset);
  }

  public int latestEpoch() {
    return leaderEpochCache.latestEpoch();
  }

  /**
   * Removes everything from the batch that holds {@code offset} on, as a follower does when its log
   * diverged from the leader's. The leader-epoch cache is truncated with it.
   *
   * @return whether anything was removed
   */
  public boolean truncateTo(long offset) {
    checkOnline();
    if (offset >= logEndOffset) {
      // No record goes, but an epoch that starts at the log end does, as in Kafka: this broker
      // led that epoch without appending, and a follower that kept it would report it as its last
      // fetched epoch, be told it diverged, truncate to here and report it again, without end.
      try {
        leaderEpochCache.truncateFromEnd(logEndOffset);
      } catch (IOException e) {
        throw failDirectory(e);
      } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
        throw failDirectory(e.getCause());
      }
      return false;
    }
    if (offset <= segments.firstBaseOffset()) {
      truncateFullyAndStartAt(offset);
      return true;
    }
    try {
      for (LogSegment later : segments.removeAbove(offset)) {
        deleteLater(later);
      }
      LogSegment active = segments.active();
      active.truncateTo(offset);
      active.prepareForAppends();
      logEndOffset = active.loadTail();
      logStartOffset = Math.min(logStartOffset, logEndOffset);
      leaderEpochCache.truncateFromEnd(logEndOffset);
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
    afterTruncation(Math.min(recoveryPoint(), logEndOffset));
    LOG.info(
        "{}: truncated to offset {}; the log end offset is {}",
        topicPartition,
        offset,
        logEndOffset);
    return true;
  }

  /** Deletes every segment and starts the log empty at {@code offset}. */
  public void truncateFullyAndStartAt(long offset) {
    checkOnline();
    try {
      for (LogSegment segment : segments.removeAll()) {
        deleteLater(segment);
      }
      segments.add(LogSegment.open(dir, offset, config, services.time().milliseconds()));
      leaderEpochCache.clear();
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
    logEndOffset = offset;
    logStartOffset = offset;
    afterTruncation(offset);
    LOG.info("{}: emptied; the log now starts at offset {}", topicPartition, offset);
  }

  private void afterTruncation(long newRecoveryPoint) {
    synchronized (recoveryPointLock) {
      truncations++;
      recoveryPoint = newRecoveryPoint;
    }
    try {
      rebuildProducerState(logEndOffset);
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
  }

  /**
   * Loads the newest producer snapshot at or below {@code replayNoLaterThan} (and the log end) and
   * replays the log after it, writing again the transaction index entries of the markers it
   * replays.
   */
  private void rebuildProducerState(long replayNoLaterThan) throws IOException {
    long replayFrom =
        producerState.loadSnapshotAtOrBelow(replayNoLaterThan, logEndOffset, logStartOffset);
    for (LogSegment segment : segments.from(replayFrom)) {
      segment.truncateTxnIndex(replayFrom);
      segment.forEachBatchFrom(
          Math.max(replayFrom, segment.baseOffset()),
          batch -> {
            if (batch.baseOffset() >= replayFrom) {
              Optional<CompletedTxn> completed = producerState.update(batch, batch.maxTimestamp());
              if (completed.isPresent()) {
                try {
                  completeTxn(segment, completed.get());
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              }
            }
          });
    }
    producerState.onHighWatermarkUpdated(highWatermark());
    refreshFirstUnstableOffset();
  }

  /**
   * Moves the log start offset up to {@code offset} (DeleteRecords) and deletes the segments that
   * lie wholly below it.
   *
   * @return the log start offset afterwards
   * @throws OffsetOutOfRangeException when {@code offset} is past the log end offset
   */
  public long deleteRecordsBefore(long offset) {
    checkOnline();
    if (offset > logEndOffset) {
      throw new OffsetOutOfRangeException(
          "Cannot delete records before "
              + offset
              + " of "
              + topicPartition
              + ": the log ends at "
              + logEndOffset);
    }
    if (offset > logStartOffset) {
      logStartOffset = offset;
      deleteOldSegments();
    }
    return logStartOffset;
  }

  /**
   * Applies retention: deletes the oldest segments, never the active one, while they lie wholly
   * below the log start offset, and under {@code cleanup.policy=delete} while they are older than
   * {@code retention.ms} (by their largest timestamp) or the log is above {@code retention.bytes}.
   *
   * @return how many segments were deleted
   */
  public int deleteOldSegments() {
    checkOnline();
    long nowMs = services.time().milliseconds();
    LogConfig config = this.config;
    long bytesAboveRetention =
        config.retentionBytes() < 0 || !config.deleteEnabled()
            ? -1
            : sizeInBytes() - config.retentionBytes();
    int deleted = 0;
    try {
      while (segments.size() > 1) {
        LogSegment oldest = segments.oldest();
        long nextBase = segments.endOffsetOf(oldest, logEndOffset);
        String reason =
            nextBase <= logStartOffset
                ? "log start offset " + logStartOffset
                : config.retentionMs() >= 0
                        && config.deleteEnabled()
                        && nowMs - oldest.largestTimestamp() > config.retentionMs()
                    ? "retention.ms " + config.retentionMs()
                    : bytesAboveRetention >= oldest.sizeInBytes()
                        ? "retention.bytes " + config.retentionBytes()
                        : null;
        if (reason == null) {
          break;
        }
        LOG.info("{}: deleting segment {} for {}", topicPartition, oldest, reason);
        bytesAboveRetention -= oldest.sizeInBytes();
        segments.remove(oldest);
        deleteLater(oldest);
        deleted++;
      }
      logStartOffset = Math.max(logStartOffset, segments.firstBaseOffset());
      leaderEpochCache.truncateFromStart(logStartOffset);
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
    producerState.removeExpired(nowMs, PRODUCER_ID_EXPIRATION_MS);
    return deleted;
  }

  /** Flushes when {@code flush.messages} or {@code flush.ms} says so. */
  public void maybeFlush(long nowMs) {
    LogConfig config = this.config;
    if (unflushedMessages >= config.flushMessages() || nowMs - lastFlushMs >= config.flushMs()) {
      flush();
    }
  }

  /** Fsyncs everything from the recovery point on and moves the recovery point to the LEO. */
  public void flush() {
    checkOnline();
    long flushedTo = logEndOffset;
    long startNanos = System.nanoTime();
    try {
      for (LogSegment segment : segments.from(recoveryPoint())) {
        segment.flush();
      }
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
    services.flushNanos().accept(System.nanoTime() - startNanos);
    synchronized (recoveryPointLock) {
      recoveryPoint = Math.max(recoveryPoint, flushedTo);
    }
    unflushedMessages = 0;
    lastFlushMs = services.time().milliseconds();
  }

  /** Applies new topic configs; they take effect from the next append, roll or retention pass. */
  public void updateConfig(LogConfig newConfig) {
    this.config = newConfig;
  }

  public TopicPartition topicPartition() {
    return topicPartition;
  }

  public Path dir() {
    return dir;
  }

  public long logStartOffset() {
    return logStartOffset;
  }

  /** The idempotent producers this log remembers (until {@code producer.id.expiration.ms}). */
  public List<ActiveProducer> activeProducers() {
    return producerState.activeProducers();
  }

  public long logEndOffset() {
    return logEndOffset;
  }

  /**
   * The high watermark the replica last set, kept here for {@code replication-offset-checkpoint}:
   * read back after a restart, it lets a leader whose ISR is still below {@code
   * min.insync.replicas} serve what was committed before. Always within the log.
   */
  public long highWatermark() {
    return Math.min(Math.max(highWatermark, logStartOffset), logEndOffset);
  }

  /** Sets the high watermark; only the thread that owns the log calls it. */
  public void updateHighWatermark(long offset) {
    highWatermark = offset;
    producerState.onHighWatermarkUpdated(offset);
    refreshFirstUnstableOffset();
  }

  /**
   * The last stable offset: the high watermark, or the first offset of an undecided or unreplicated
   * transaction when that is lower. A {@code read_committed} consumer reads below it.
   */
  public long lastStableOffset() {
    return Math.min(highWatermark(), firstUnstableOffset);
  }

  /**
   * The aborted transactions that overlap {@code [startOffset, upperBoundOffset)}, the range of a
   * {@code read_committed} fetch, from the transaction indexes of the segment holding {@code
   * startOffset} on, as Kafka collects them: a search ends at an entry whose last stable offset
   * reaches the bound.
   */
  public List<AbortedTxn> abortedTransactions(long startOffset, long upperBoundOffset) {
    checkOnline();
    List<AbortedTxn> aborted = new ArrayList<>();
    try {
      for (LogSegment segment : segments.from(startOffset)) {
        TxnIndexSearchResult result = segment.collectAbortedTxns(startOffset, upperBoundOffset);
        aborted.addAll(result.abortedTransactions);
        if (result.isComplete) {
          break;
        }
      }
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (KafkaException e) {
      if (e.getCause() instanceof IOException io) {
        throw failDirectory(io);
      }
      throw e;
    }
    return aborted;
  }

  /**
   * The log cleaner's checkpoint ({@code cleaner-offset-checkpoint}): the end of its last pass,
   * from which the log is dirty.
   */
  public long firstDirtyOffset() {
    return firstDirtyOffset;
  }

  public void updateFirstDirtyOffset(long offset) {
    firstDirtyOffset = offset;
  }

  /** When the tombstones the cleaner's last pass kept may go, or -1 when it kept none. */
  long deleteHorizonMs() {
    return deleteHorizonMs;
  }

  void updateDeleteHorizonMs(long horizonMs) {
    deleteHorizonMs = horizonMs;
  }

  LogConfig config() {
    return config;
  }

  /** The first offset of an undecided or unreplicated transaction, or {@code Long.MAX_VALUE}. */
  long firstUnstableOffset() {
    return firstUnstableOffset;
  }

  /** Each live producer's id to the last offset it wrote, which compaction must keep. */
  Map<Long, Long> lastOffsetsOfProducers() {
    return producerState.lastOffsets();
  }

  LogSegments segments() {
    return segments;
  }

  /**
   * Puts the cleaned copy of {@code original} (same base offset, in {@code cleanedDir}) in its
   * place, unless the log no longer holds it or it became active. Index files go first, then the
   * {@code .log} file is replaced in one atomic rename, so a crash leaves either segment whole.
   *
   * @return whether it was replaced; the copy is deleted otherwise
   */
  boolean replaceSegment(LogSegment original, Path cleanedDir) throws IOException {
    checkOnline();
    long base = original.baseOffset();
    List<String> suffixes =
        List.of(LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX);
    try {
      if (!segments.holds(original) || original == segments.active()) {
        for (String suffix : suffixes) {
          Files.deleteIfExists(LogSegment.file(cleanedDir, base, suffix));
        }
        Files.deleteIfExists(LogSegment.file(cleanedDir, base, LogSegment.TXN_INDEX_SUFFIX));
        return false;
      }
      closeLater(original.closeIndexes());
      // Before the records: the cleaned index names the aborts whose markers the cleaned records
      // keep. A crash between leaves the original records with abort markers the index no longer
      // names, of transactions with no records left (the cleaner removes an abort marker only
      // then), which a read_committed reader passes over; the other order could leave an entry
      // whose marker is gone, and a reader skipping that producer's later transactions.
      Path cleanedTxnIndex = LogSegment.file(cleanedDir, base, LogSegment.TXN_INDEX_SUFFIX);
      Path txnIndex = LogSegment.file(dir, base, LogSegment.TXN_INDEX_SUFFIX);
      if (Files.exists(cleanedTxnIndex)) {
        Files.move(
            cleanedTxnIndex,
            txnIndex,
            StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
      } else {
        Files.deleteIfExists(txnIndex);
      }
      Files.deleteIfExists(LogSegment.file(dir, base, LogSegment.INDEX_SUFFIX));
      Files.deleteIfExists(LogSegment.file(dir, base, LogSegment.TIME_INDEX_SUFFIX));
      for (String suffix : suffixes) {
        Files.move(
            LogSegment.file(cleanedDir, base, suffix),
            LogSegment.file(dir, base, suffix),
            StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
      }
      segments.add(LogSegment.open(dir, base, config, services.time().milliseconds()));
      return true;
    } catch (IOException e) {
      throw failDirectory(e);
    } catch (UncheckedIOException e) { // a released segment file that cannot be opened again
      throw failDirectory(e.getCause());
    }
  }

  public long recoveryPoint() {
    synchronized (recoveryPointLock) {
      return Math.min(recoveryPoint, logEndOffset);
    }
  }

  public long sizeInBytes() {
    return segments.sizeInBytes();
  }

  public int numberOfSegments() {
    return segments.size();
  }

  /**
   * How many times this log was truncated or emptied since it opened: a copy of it that saw another
   * count may hold records this log no longer has.
   */
  public long truncations() {
    synchronized (recoveryPointLock) {
      return truncations;
    }
  }

  public boolean isOffline() {
    return offline;
  }

  /** Flushes and closes the segments; the recovery point becomes the log end offset. */
  @Override
  public void close() throws IOException {
    if (offline) {
      return;
    }
    flush();
    try {
      partitionMetadata.maybeFlush();
    } catch (IOException e) {
      throw failDirectory(e);
    }
    producerState.snapshot(logEndOffset);
    for (LogSegment segment : segments.all()) {
      segment.close();
    }
  }

  /**
   * Marks the log unusable after its directory failed and releases its file handles. Any thread may
   * call it: it touches no in-memory index, only closes channels, which is thread-safe.
   */
  void markOffline() {
    offline = true;
    segments.closeHandlers();
  }

  /**
   * Records that this log belongs to the topic {@code topicId}, in its {@code partition.metadata}:
   * written and fsynced by the flusher, or before the first append, whichever comes first.
   */
  void recordTopicId(Uuid topicId) {
    partitionMetadata.record(topicId);
    services
        .flusher()
        .execute(
            () -> {
              try {
                if (!offline) {
                  partitionMetadata.maybeFlush();
                }
              } catch (IOException e) {
                if (!offline) {
                  failDirectory(e);
                }
              }
            });
  }

  /**
   * The id of the topic this log belongs to, as last recorded; none for a log that predates topic
   * ids.
   *
   * @throws KafkaStorageException when {@code partition.metadata} is unreadable or malformed; the
   *     log directory is offline then
   */
  Optional<String> topicId() {
    try {
      return partitionMetadata.read();
    } catch (IOException e) {
      throw failDirectory(e);
    }
  }

  /**
   * Deletes {@code segment}'s files now and closes its file {@code file.delete.delay.ms} later, so
   * that a read already answered from it, still being sent, finishes.
   */
  private void deleteLater(LogSegment segment) throws IOException {
    closeLater(segment.deleteFiles());
  }

  private void closeLater(FileRecords file) throws IOException {
    if (file != null) {
      services.fileCloser().closeAfter(config.fileDeleteDelayMs(), file);
    }
  }

  /** Deletes the log's directory and everything in it; the log must not be used afterwards. */
  void delete() throws IOException {
    partitionMetadata.discard();
    for (LogSegment segment : segments.removeAll()) {
      deleteLater(segment);
    }
    Utils.delete(dir.toFile());
  }

  private void checkOnline() {
    if (offline) {
      throw new KafkaStorageException(
          "The log directory of " + topicPartition + " (" + dir.getParent() + ") is offline");
    }
  }

  private KafkaStorageException failDirectory(IOException e) {
    LOG.error("{}: I/O error in log directory {}", topicPartition, dir.getParent(), e);
    services.dirFailureHandler().onFailure(dir.getParent(), e);
    offline = true;
    return new KafkaStorageException(
        "I/O error on " + topicPartition + " in " + dir.getParent() + ": " + e.getMessage(), e);
  }

  /**
   * The checkpointed state a log is loaded with.
   *
   * @param recoveryPoint the offset below which the log was fsynced
   * @param logStartOffset the first offset to keep
   * @param hadCleanShutdown whether the broker closed the log cleanly, so recovery can be skipped
   */
  public record LoadState(long recoveryPoint, long logStartOffset, boolean hadCleanShutdown) {
    public static final LoadState NEW = new LoadState(0, 0, true);
  }
}
