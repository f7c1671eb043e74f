package io.tidelog.broker.log;

import io.tidelog.broker.log.TimeIndex.TimestampOffset;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.record.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.FileRecords.LogOffsetPosition;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.apache.kafka.storage.internals.log.CompletedTxn;
import org.apache.kafka.storage.internals.log.TransactionIndex;
import org.apache.kafka.storage.internals.log.TxnIndexSearchResult;

/**
 * One segment of a partition's log: the {@code .log} file of record batches and its {@code .index}
 * and {@code .timeindex}, all named by the 20-digit base offset, as in Kafka; and, once a
 * transaction whose abort marker lies in it was aborted, its {@code .txnindex} (Kafka's {@link
 * TransactionIndex}, in Kafka's format), which {@code read_committed} fetches consult.
 *
 * <p>The {@code .log} file holds Kafka v2 record batches back to back, byte for byte as a client
 * fetches them. Every {@code index.interval.bytes} of appended data adds an offset index entry and,
 * when the largest timestamp grew, a time index entry.
 *
 * <p>Batches that this process has not yet CRC-checked (those of segments loaded without recovery
 * after a clean shutdown) are checked when first read, so on-disk corruption surfaces as a {@link
 * CorruptRecordException} for this partition instead of reaching a client.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
final class LogSegment implements AutoCloseable {
  static final String LOG_SUFFIX = ".log";
  static final String INDEX_SUFFIX = ".index";
  static final String TIME_INDEX_SUFFIX = ".timeindex";
  static final String TXN_INDEX_SUFFIX = ".txnindex";

  private final long baseOffset;
  private final File file;

  /**
   * The {@code .log} file, open; or null once {@link #releaseFile released}, until something needs
   * it again. Guarded by this segment: the log cleaner reads inactive segments on its own thread.
   */
  private FileRecords log;

  /** The file's size while it is released. */
  private int releasedSize;

  private final OffsetIndex offsetIndex;
  private final TimeIndex timeIndex;

  /**
   * The aborted transactions' index, opened when first needed and closed with the other indexes;
   * Kafka's class reads nothing through a channel it closed, so a closed one is dropped. Guarded by
   * this segment, as {@link #log} is.
   */
  private TransactionIndex txnIndex;

  /**
   * Whether the {@code .txnindex} file exists, once looked at: a {@code read_committed} fetch asks
   * every later segment, and most have none.
   */
  private Boolean txnIndexFileExists;

  private final int indexIntervalBytes;
  private final long createdMs;

  /** Taken off {@code segment.ms} for this segment ({@code segment.jitter.ms}). */
  private final long rollJitterMs;

  private int bytesSinceLastIndexEntry;
  private long maxTimestampSoFar = RecordBatch.NO_TIMESTAMP;
  private long offsetOfMaxTimestampSoFar;

  /**
   * Whether the two fields above are known: read from the time index's last entry when first
   * needed, so that opening a segment reads none of its index.
   */
  private boolean maxTimestampKnown;

  private long firstBatchTimestamp = RecordBatch.NO_TIMESTAMP;
  // Bytes in [verifiedPrefixBytes, appendedFromBytes) have not been CRC-checked by this process.
  private int verifiedPrefixBytes;
  private int appendedFromBytes;

  private LogSegment(
      long baseOffset,
      FileRecords log,
      OffsetIndex offsetIndex,
      TimeIndex timeIndex,
      LogConfig config,
      long createdMs) {
    this.baseOffset = baseOffset;
    this.file = log.file();
    this.log = log;
    this.offsetIndex = offsetIndex;
    this.timeIndex = timeIndex;
    this.indexIntervalBytes = config.indexIntervalBytes();
    this.createdMs = createdMs;
    this.rollJitterMs = config.randomSegmentJitterMs();
    this.offsetOfMaxTimestampSoFar = baseOffset;
    this.verifiedPrefixBytes = 0;
    this.appendedFromBytes = log.sizeInBytes();
  }

  private void knowMaxTimestamp() {
    if (!maxTimestampKnown) {
      TimestampOffset lastTime = timeIndex.lastEntry();
      maxTimestampSoFar = lastTime.timestamp();
      offsetOfMaxTimestampSoFar = lastTime.offset();
      maxTimestampKnown = true;
    }
  }

  /** Opens the segment at {@code baseOffset} in {@code dir}, creating its files when missing. */
  static LogSegment open(Path dir, long baseOffset, LogConfig config, long nowMs)
      throws IOException {
    FileRecords log = FileRecords.open(file(dir, baseOffset, LOG_SUFFIX).toFile());
    OffsetIndex offsetIndex = null;
    try {
      offsetIndex =
          new OffsetIndex(
              file(dir, baseOffset, INDEX_SUFFIX), baseOffset, config.segmentIndexBytes());
      TimeIndex timeIndex =
          new TimeIndex(
              file(dir, baseOffset, TIME_INDEX_SUFFIX), baseOffset, config.segmentIndexBytes());
      return new LogSegment(baseOffset, log, offsetIndex, timeIndex, config, nowMs);
    } catch (IOException | RuntimeException e) {
      log.closeHandlers();
      if (offsetIndex != null) {
        offsetIndex.release();
      }
      throw e;
    }
  }

  static Path file(Path dir, long baseOffset, String suffix) {
    return dir.resolve(String.format("%020d", baseOffset) + suffix);
  }

  long baseOffset() {
    return baseOffset;
  }

  synchronized int sizeInBytes() {
    return log == null ? releasedSize : log.sizeInBytes();
  }

  /** The open file, opened again if it was released. */
  private synchronized FileRecords log() {
    if (log == null) {
      try {
        log = FileRecords.open(file);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot open " + file, e);
      }
    }
    return log;
  }

  /**
   * Closes the file until something needs it again: for a segment whose writes are all flushed
   * (after loading), so that an idle partition holds no file descriptor.
   */
  synchronized void releaseFile() throws IOException {
    if (log != null) {
      releasedSize = log.sizeInBytes();
      log.closeHandlers();
      log = null;
    }
  }

  /** The segment's batches, for the log cleaner, which reads inactive segments on its thread. */
  Iterable<FileChannelRecordBatch> batches() {
    return log().batches();
  }

  FileRecords records() {
    return log();
  }

  Path logFile() {
    return file.toPath();
  }

  /**
   * Appends batches whose offsets are already assigned. The caller has checked {@link #shouldRoll},
   * so the offsets fit this segment's relative offsets and its indexes have room.
   */
  void append(long largestOffset, MemoryRecords records) throws IOException {
    if (!fitsRelativeOffset(largestOffset)) {
      throw new IllegalStateException(
          "offset " + largestOffset + " does not fit segment " + baseOffset + "; it should roll");
    }
    int position = sizeInBytes();
    if (position == 0) {
      firstBatchTimestamp = records.batches().iterator().next().maxTimestamp();
    }
    log().append(records);
    for (RecordBatch batch : records.batches()) {
      indexBatch(batch, position);
      position += batch.sizeInBytes();
    }
  }

  private void indexBatch(RecordBatch batch, int position) throws IOException {
    knowMaxTimestamp();
    if (batch.maxTimestamp() > maxTimestampSoFar) {
      maxTimestampSoFar = batch.maxTimestamp();
      offsetOfMaxTimestampSoFar = batch.lastOffset();
    }
    if (bytesSinceLastIndexEntry > indexIntervalBytes) {
      offsetIndex.append(batch.lastOffset(), position);
      timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, false);
      bytesSinceLastIndexEntry = 0;
    }
    bytesSinceLastIndexEntry += batch.sizeInBytes();
  }

  /**
   * Reads whole batches from the one that holds {@code startOffset}, up to {@code maxBytes} (but
   * always the first batch) and stopping before the batch that holds {@code maxOffset}; {@code
   * Long.MAX_VALUE} means no bound within this segment.
   *
   * <p>The region's end is found with the offset index, so a read costs a few header reads rather
   * than one per batch, except where batches still need their first CRC check.
   *
   * @return the region, possibly empty, or empty when {@code startOffset} lies past this segment
   * @throws CorruptRecordException when a batch in the region fails its checks
   */
  Optional<LogReadInfo> read(long startOffset, int maxBytes, long maxOffset) {
    LogOffsetPosition start = translateOffset(startOffset);
    if (start == null) {
      return Optional.empty();
    }
    long limit = Math.min((long) start.position + Math.max(maxBytes, start.size), sizeInBytes());
    if (maxOffset != Long.MAX_VALUE) {
      LogOffsetPosition bound = translateOffset(maxOffset);
      if (bound != null) {
        limit = Math.min(limit, bound.position);
      }
    }
    RegionEnd region = wholeBatchesUpTo(start, startOffset, (int) limit);
    int size = region.position() - start.position;
    return Optional.of(
        new LogReadInfo(log().slice(start.position, size), start.position, region.nextOffset()));
  }

  /**
   * The end of the last whole batch that starts at or after {@code start} and ends by {@code
   * limit}. Batches already verified are skipped by jumping to the index entry nearest the limit.
   */
  private RegionEnd wholeBatchesUpTo(LogOffsetPosition start, long startOffset, int limit) {
    boolean verified = limit <= verifiedPrefixBytes || start.position >= appendedFromBytes;
    int from =
        verified ? Math.max(start.position, offsetIndex.floorPosition(limit)) : start.position;
    int end = from;
    long nextOffset = startOffset;
    boolean exhausted = true;
    for (FileChannelRecordBatch batch : log().batchesFrom(from)) {
      int batchEnd = batch.position() + batch.sizeInBytes();
      if (batchEnd > limit) {
        if (end == from && from > start.position) {
          nextOffset = batch.baseOffset();
        }
        exhausted = false;
        break;
      }
      if (end > from && batch.baseOffset() < nextOffset) {
        throw corrupt(batch.position(), "offset " + batch.baseOffset() + " after " + nextOffset);
      }
      verify(batch);
      end = batchEnd;
      nextOffset = batch.lastOffset() + 1;
    }
    if (exhausted && end < limit) {
      checkReachedEnd(end);
    }
    return new RegionEnd(end, nextOffset);
  }

  /** Where a read region ends, and the offset after its last batch. */
  private record RegionEnd(int position, long nextOffset) {}

  /** An empty region at the end of the file, for a read at or past the readable end. */
  LogReadInfo emptyRead(long nextOffset) {
    return new LogReadInfo(MemoryRecords.EMPTY, sizeInBytes(), nextOffset);
  }

  private synchronized TransactionIndex txnIndex() throws IOException {
    if (txnIndex == null) {
      txnIndex = new TransactionIndex(baseOffset, txnIndexFile().toFile());
      txnIndexFileExists = true; // or will, with the append this is opened for
    }
    return txnIndex;
  }

  private Path txnIndexFile() {
    return file(file.toPath().getParent(), baseOffset, TXN_INDEX_SUFFIX);
  }

  /** Records {@code completed}, whose marker this segment holds, when it was an abort. */
  void updateTxnIndex(CompletedTxn completed, long lastStableOffset) throws IOException {
    if (completed.isAborted) {
      recordAbortedTxn(new AbortedTxn(completed, lastStableOffset));
    }
  }

  /** Records an aborted transaction whose marker this segment holds. */
  void recordAbortedTxn(AbortedTxn aborted) throws IOException {
    txnIndex().append(aborted);
  }

  /**
   * The aborted transactions recorded here that overlap {@code [fetchOffset, upperBoundOffset)},
   * and whether the search is complete (an entry's last stable offset reached the bound), as
   * Kafka's {@link TransactionIndex#collectAbortedTxns}.
   */
  TxnIndexSearchResult collectAbortedTxns(long fetchOffset, long upperBoundOffset)
      throws IOException {
    TransactionIndex existing = existingTxnIndex();
    return existing == null
        ? new TxnIndexSearchResult(List.of(), false)
        : existing.collectAbortedTxns(fetchOffset, upperBoundOffset);
  }

  /** Drops the aborted transactions whose marker is at or after {@code offset}. */
  void truncateTxnIndex(long offset) throws IOException {
    TransactionIndex existing = existingTxnIndex();
    if (existing != null) {
      existing.truncateTo(offset);
    }
  }

  /** The transaction index, or null when this segment has none (no abort was recorded here). */
  private synchronized TransactionIndex existingTxnIndex() throws IOException {
    if (txnIndexFileExists == null) {
      txnIndexFileExists = Files.exists(txnIndexFile());
    }
    return txnIndex == null && !txnIndexFileExists ? null : txnIndex();
  }

  private synchronized void closeTxnIndex() throws IOException {
    if (txnIndex != null) {
      TransactionIndex open = txnIndex;
      txnIndex = null;
      open.close();
    }
  }

  private void verify(FileChannelRecordBatch batch) {
    int position = batch.position();
    int end = position + batch.sizeInBytes();
    if (end <= verifiedPrefixBytes || position >= appendedFromBytes) {
      return;
    }
    checkStoredBatch(batch);
    if (position == verifiedPrefixBytes) {
      verifiedPrefixBytes = end;
    }
  }

  private void checkStoredBatch(FileChannelRecordBatch batch) {
    if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
      throw corrupt(batch.position(), "a batch with magic " + batch.magic());
    }
    try {
      batch.ensureValid();
    } catch (CorruptRecordException e) {
      throw corrupt(batch.position(), "a batch that fails its check (" + e.getMessage() + ")");
    }
  }

  /**
   * The position of the first batch whose last offset is at least {@code offset}, or null when the
   * segment ends before it.
   *
   * @throws CorruptRecordException when a batch header claims more bytes than the file holds
   */
  LogOffsetPosition translateOffset(long offset) {
    int position = offsetIndex.lookup(offset).position();
    for (FileChannelRecordBatch batch : log().batchesFrom(position)) {
      if (batch.lastOffset() >= offset) {
        return LogOffsetPosition.fromBatch(batch);
      }
      position = batch.position() + batch.sizeInBytes();
    }
    checkReachedEnd(position);
    return null;
  }

  // Kafka's batch iterator stops quietly at a header whose length runs past the end of the file;
  // anywhere but a torn tail (which recovery removed) that is corruption, not the end of the data.
  private void checkReachedEnd(int position) {
    if (position != sizeInBytes()) {
      throw corrupt(position, "a batch whose length runs past the end of the file");
    }
  }

  private CorruptRecordException corrupt(int position, String what) {
    return new CorruptRecordException(
        "Segment "
            + baseOffset
            + " ("
            + logFile()
            + ") holds "
            + what
            + " at position "
            + position);
  }

  /** Hands every batch from the one holding {@code offset} to the end to {@code action}. */
  void forEachBatchFrom(long offset, java.util.function.Consumer<RecordBatch> action) {
    LogOffsetPosition start = translateOffset(offset);
    if (start != null) {
      for (FileChannelRecordBatch batch : log().batchesFrom(start.position)) {
        action.accept(batch);
      }
    }
  }

  /**
   * The first record at or after {@code startingOffset} whose timestamp is at least {@code
   * timestamp}, if this segment holds one.
   */
  Optional<TimestampAndOffset> findOffsetByTimestamp(long timestamp, long startingOffset) {
    TimestampOffset fromIndex = timeIndex.lookup(timestamp);
    int position = offsetIndex.lookup(Math.max(fromIndex.offset(), startingOffset)).position();
    return Optional.ofNullable(log().searchForTimestamp(timestamp, position, startingOffset));
  }

  /** The largest record timestamp, or the file's modification time when it has none. */
  long largestTimestamp() throws IOException {
    knowMaxTimestamp();
    return maxTimestampSoFar >= 0
        ? maxTimestampSoFar
        : Files.getLastModifiedTime(logFile()).toMillis();
  }

  long maxTimestampSoFar() {
    knowMaxTimestamp();
    return maxTimestampSoFar;
  }

  /**
   * The record with this segment's largest timestamp (the first such record), as ListOffsets'
   * MAX_TIMESTAMP wants it (KIP-734), if the segment holds records with timestamps.
   */
  Optional<TimestampAndOffset> maxTimestampRecord() {
    knowMaxTimestamp();
    if (maxTimestampSoFar < 0) {
      return Optional.empty();
    }
    LogOffsetPosition batchPosition = translateOffset(offsetOfMaxTimestampSoFar);
    if (batchPosition == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(
        log().searchForTimestamp(maxTimestampSoFar, batchPosition.position, baseOffset));
  }

  /** The max timestamp of the segment's first batch, read when not known; -1 when it is empty. */
  long firstBatchTimestamp() {
    if (firstBatchTimestamp == RecordBatch.NO_TIMESTAMP && sizeInBytes() > 0) {
      firstBatchTimestamp = log().batches().iterator().next().maxTimestamp();
    }
    return firstBatchTimestamp;
  }

  boolean shouldRoll(RollParams params) {
    long waitedMs =
        firstBatchTimestamp >= 0 && params.maxTimestampInMessages() >= 0
            ? params.maxTimestampInMessages() - firstBatchTimestamp
            : params.nowMs() - createdMs;
    return sizeInBytes() > params.segmentBytes() - params.messagesSizeBytes()
        || sizeInBytes() > 0 && waitedMs > params.segmentMs() - rollJitterMs
        || offsetIndex.isFull()
        || timeIndex.isFull()
        || !fitsRelativeOffset(params.maxOffsetInMessages());
  }

  private boolean fitsRelativeOffset(long offset) {
    long relative = offset - baseOffset;
    return relative >= 0 && relative <= Integer.MAX_VALUE;
  }

  /**
   * Rebuilds both indexes from the log, CRC-checking every batch, and truncates the file at the
   * first batch that is torn, corrupt or out of order.
   */
  RecoveryResult recover() throws IOException {
    offsetIndex.truncateToSlot(0);
    timeIndex.truncateToSlot(0);
    maxTimestampSoFar = RecordBatch.NO_TIMESTAMP;
    offsetOfMaxTimestampSoFar = baseOffset;
    maxTimestampKnown = true;
    bytesSinceLastIndexEntry = 0;
    firstBatchTimestamp = RecordBatch.NO_TIMESTAMP;
    int validBytes = 0;
    long nextOffset = baseOffset;
    String problem = "a torn batch";
    try {
      for (FileChannelRecordBatch batch : log().batches()) {
        checkStoredBatch(batch);
        if (batch.baseOffset() < nextOffset || !fitsRelativeOffset(batch.lastOffset())) {
          throw new CorruptRecordException(
              "batch offsets "
                  + batch.baseOffset()
                  + ".."
                  + batch.lastOffset()
                  + " do not follow "
                  + (nextOffset - 1));
        }
        if (validBytes == 0) {
          firstBatchTimestamp = batch.maxTimestamp();
        }
        indexBatch(batch, validBytes);
        validBytes += batch.sizeInBytes();
        nextOffset = batch.nextOffset();
      }
    } catch (CorruptRecordException e) {
      problem = e.getMessage();
    }
    int truncatedBytes = sizeInBytes() - validBytes;
    if (truncatedBytes > 0) {
      log().truncateTo(validBytes);
    }
    verifiedPrefixBytes = validBytes;
    appendedFromBytes = validBytes;
    return new RecoveryResult(validBytes, truncatedBytes, nextOffset, problem);
  }

  /**
   * Whether the indexes can be trusted without a rebuild: they point inside the log file. Checked
   * for segments that recovery does not scan.
   */
  boolean indexesLookConsistent() {
    int size = sizeInBytes();
    return (offsetIndex.entries() == 0 || offsetIndex.lastEntry().position() < size)
        && (size > 0 || offsetIndex.entries() == 0 && timeIndex.entries() == 0);
  }

  /**
   * Reads the batches after the last offset index entry, as the active segment must after a clean
   * load, and returns the next offset to assign.
   *
   * @throws CorruptRecordException when a header there is broken; the caller recovers instead
   */
  long loadTail() {
    maxTimestampKnown = false;
    knowMaxTimestamp();
    bytesSinceLastIndexEntry = 0;
    long nextOffset = baseOffset;
    for (FileChannelRecordBatch batch : log().batchesFrom(offsetIndex.lastEntry().position())) {
      if (batch.maxTimestamp() > maxTimestampSoFar) {
        maxTimestampSoFar = batch.maxTimestamp();
        offsetOfMaxTimestampSoFar = batch.lastOffset();
      }
      bytesSinceLastIndexEntry += batch.sizeInBytes();
      nextOffset = batch.nextOffset();
    }
    if (sizeInBytes() > 0) {
      firstBatchTimestamp = log().batches().iterator().next().maxTimestamp();
    }
    return nextOffset;
  }

  /**
   * Removes the batch that holds {@code offset} and everything after it.
   *
   * @return the number of bytes removed
   */
  int truncateTo(long offset) throws IOException {
    LogOffsetPosition mapping = translateOffset(offset);
    if (mapping == null) {
      return 0;
    }
    offsetIndex.truncateTo(offset);
    timeIndex.truncateTo(offset);
    truncateTxnIndex(offset);
    int removed = log().truncateTo(mapping.position);
    verifiedPrefixBytes = Math.min(verifiedPrefixBytes, mapping.position);
    appendedFromBytes = Math.min(appendedFromBytes, mapping.position);
    if (mapping.position == 0) {
      firstBatchTimestamp = RecordBatch.NO_TIMESTAMP;
    }
    loadTail();
    return removed;
  }

  /** Makes room in the indexes again, for the last segment of a log that was reloaded. */
  void prepareForAppends() throws IOException {
    offsetIndex.resizeForAppends();
    timeIndex.resizeForAppends();
  }

  /**
   * Records the final largest timestamp and shrinks the indexes when a newer segment takes over.
   */
  void onBecomeInactiveSegment() throws IOException {
    if (maxTimestampKnown) { // else the time index's last entry holds it
      timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, true);
    }
    offsetIndex.trimToValidSize();
    timeIndex.trimToValidSize();
    releaseIndexes();
  }

  /** Unmaps the indexes, and closes the transaction index, until something needs them again. */
  void releaseIndexes() throws IOException {
    offsetIndex.release();
    timeIndex.release();
    closeTxnIndex();
  }

  /** Whether an index of this segment is mapped now. */
  boolean indexesMapped() {
    return offsetIndex.isMapped() || timeIndex.isMapped();
  }

  void flush() throws IOException {
    FileRecords open = openFile();
    if (open != null) { // a released file has nothing unflushed
      open.flush();
    }
    offsetIndex.flush();
    timeIndex.flush();
    TransactionIndex aborts = openTxnIndex();
    if (aborts != null) {
      aborts.flush();
    }
  }

  private synchronized TransactionIndex openTxnIndex() {
    return txnIndex;
  }

  @Override
  public void close() throws IOException {
    FileRecords open = null;
    try {
      open = closeIndexes();
    } finally {
      open = open == null ? takeFile() : open;
      if (open != null) {
        open.close();
      }
    }
  }

  /**
   * Closes the indexes and gives up the segment's open file without closing it, for a caller that
   * closes it later; null if it was not open. The segment must not be used afterwards.
   */
  FileRecords closeIndexes() throws IOException {
    if (maxTimestampKnown) { // else the time index's last entry holds it
      timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, true);
    }
    offsetIndex.close();
    timeIndex.close();
    closeTxnIndex();
    return takeFile();
  }

  private synchronized FileRecords openFile() {
    return log;
  }

  private synchronized FileRecords takeFile() {
    FileRecords open = log;
    log = null;
    return open;
  }

  /** Releases file handles without writing, for a log directory that failed. */
  void closeHandlers() {
    try {
      closeTxnIndex();
      FileRecords open = takeFile();
      if (open != null) {
        open.closeHandlers();
      }
    } catch (IOException e) {
      // The directory already failed; nothing more can be done with this handle.
    }
  }

  /** Deletes the segment's files and closes them. */
  void delete() throws IOException {
    FileRecords open = deleteFiles();
    if (open != null) {
      open.closeHandlers();
    }
  }

  /**
   * Deletes the segment's files and gives up its open file without closing it (it stays readable
   * until closed), for a caller that closes it later; null if it was not open.
   */
  FileRecords deleteFiles() throws IOException {
    offsetIndex.delete();
    timeIndex.delete();
    closeTxnIndex();
    Files.deleteIfExists(txnIndexFile());
    synchronized (this) {
      txnIndexFileExists = false;
    }
    FileRecords open = takeFile();
    Files.deleteIfExists(file.toPath());
    return open;
  }

  @Override
  public String toString() {
    return "LogSegment(baseOffset=" + baseOffset + ", size=" + sizeInBytes() + ")";
  }

  /** The inputs of the roll decision. */
  record RollParams(
      int messagesSizeBytes,
      long maxOffsetInMessages,
      long maxTimestampInMessages,
      long nowMs,
      int segmentBytes,
      long segmentMs) {}

  /** What recovery kept and dropped, and why it stopped. */
  record RecoveryResult(int validBytes, int truncatedBytes, long nextOffset, String problem) {}
}
