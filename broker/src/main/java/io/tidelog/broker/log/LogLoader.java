package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads a partition replica's directory when its log opens, as Kafka's {@code LogLoader}: the
 * segments found, recovered from the recovery point on. Runs once, on the thread that opens the
 * log, before any other call on it.
 */
final class LogLoader {
  private static final Logger LOG = LoggerFactory.getLogger(LogLoader.class);
  private static final Pattern SEGMENT_NAME = Pattern.compile("\\d{20}\\.log");

  private final TopicPartition topicPartition;
  private final Path dir;
  private final LogConfig config;
  private final LogSegments segments;

  /** {@code segments} is the log's segment map, empty, which the load fills. */
  LogLoader(TopicPartition topicPartition, Path dir, LogConfig config, LogSegments segments) {
    this.topicPartition = topicPartition;
    this.dir = dir;
    this.config = config;
    this.segments = segments;
  }

  /**
   * Fills the segment map from the directory and recovers it: leftovers of unfinished work
   * (temporary, deleted, swapped and cleaned files, orphan indexes) go; after an unclean shutdown
   * every batch from the recovery point on is CRC-checked, and a torn or corrupt tail is truncated
   * with the segments after it; missing or inconsistent indexes are rebuilt; recovered segments are
   * flushed.
   *
   * @return the log end offset
   */
  long load(PartitionLog.LoadState state, long nowMs) throws IOException {
    Set<Long> needIndexRebuild = new HashSet<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        if (name.equals(LogCleaner.CLEANED_DIR)) {
          Utils.delete(file.toFile()); // a cleaning pass that did not finish
        } else if (name.endsWith(".tmp")
            || name.endsWith(".deleted")
            || name.endsWith(".cleaned")
            || name.endsWith(".swap")) {
          Files.delete(file);
        } else if (name.endsWith(LogSegment.LOG_SUFFIX)) {
          if (!SEGMENT_NAME.matcher(name).matches()) {
            LOG.warn(
                "{}: ignoring {}, which is not named by a 20-digit offset", topicPartition, file);
            continue;
          }
          long base = Long.parseLong(name.substring(0, 20));
          if (!Files.exists(LogSegment.file(dir, base, LogSegment.INDEX_SUFFIX))
              || !Files.exists(LogSegment.file(dir, base, LogSegment.TIME_INDEX_SUFFIX))) {
            needIndexRebuild.add(base);
          }
          segments.add(LogSegment.open(dir, base, config, nowMs));
        }
      }
    }
    deleteOrphanIndexes();
    if (segments.isEmpty()) {
      segments.add(LogSegment.open(dir, state.logStartOffset(), config, nowMs));
    }
    long firstToRecover =
        state.hadCleanShutdown()
            ? Long.MAX_VALUE
            : segments.baseOffsetHolding(state.recoveryPoint());
    List<LogSegment> recovered = new ArrayList<>();
    for (LogSegment segment : List.copyOf(segments.all())) {
      boolean unflushed = segment.baseOffset() >= firstToRecover;
      if (unflushed
          || needIndexRebuild.contains(segment.baseOffset())
          || !segment.indexesLookConsistent()) {
        recovered.add(segment);
        if (recoverSegment(segment, unflushed)) {
          break;
        }
      }
    }
    LogSegment active = segments.active();
    long logEndOffset = loadActiveTail(active, recovered);
    active.prepareForAppends();
    // Mapped again by the first lookup or append that needs them. A segment recovery rebuilt
    // records its final largest timestamp as at a roll; for the others that is done already.
    for (LogSegment segment : segments.below(active.baseOffset())) {
      segment.onBecomeInactiveSegment();
    }
    for (LogSegment segment : recovered) {
      if (segments.holds(segment)) {
        segment.flush();
      }
    }
    return logEndOffset;
  }

  /**
   * Recovers one segment. When it truncates a segment that held unflushed data, the log ends there:
   * later segments cannot follow on and are deleted, and this returns true. A segment below the
   * recovery point (recovered for its indexes) keeps the segments after it.
   */
  private boolean recoverSegment(LogSegment segment, boolean unflushed) throws IOException {
    LogSegment.RecoveryResult result = segment.recover();
    if (result.truncatedBytes() == 0) {
      return false;
    }
    if (!unflushed) {
      LOG.error(
          "{}: truncated {} bytes from position {} of flushed segment {} at {}; offsets from {}"
              + " to the next segment are lost",
          topicPartition,
          result.truncatedBytes(),
          result.validBytes(),
          segment.baseOffset(),
          result.problem(),
          result.nextOffset());
      return false;
    }
    List<LogSegment> later = segments.removeAbove(segment.baseOffset());
    long droppedBytes = later.stream().mapToLong(LogSegment::sizeInBytes).sum();
    LOG.warn(
        "{}: truncated {} bytes from position {} of segment {} at {}; the log now ends before"
            + " offset {}; dropped {} later segments ({} bytes) from offset {}",
        topicPartition,
        result.truncatedBytes(),
        result.validBytes(),
        segment.baseOffset(),
        result.problem(),
        result.nextOffset(),
        later.size(),
        droppedBytes,
        later.isEmpty() ? "-" : later.get(0).baseOffset());
    for (LogSegment dropped : later) {
      dropped.delete();
    }
    return true;
  }

  private long loadActiveTail(LogSegment active, List<LogSegment> recovered) throws IOException {
    try {
      return active.loadTail();
    } catch (KafkaException e) {
      if (recovered.contains(active)) {
        throw e;
      }
      LOG.warn(
          "{}: the active segment's tail is unreadable ({}); recovering it",
          topicPartition,
          e.toString());
      recovered.add(active);
      recoverSegment(active, true);
      return active.loadTail();
    }
  }

  private void deleteOrphanIndexes() throws IOException {
    try (DirectoryStream<Path> files =
        Files.newDirectoryStream(
            dir,
            "*{"
                + LogSegment.INDEX_SUFFIX
                + ","
                + LogSegment.TIME_INDEX_SUFFIX
                + ","
                + LogSegment.TXN_INDEX_SUFFIX
                + "}")) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        String base = name.substring(0, name.indexOf('.'));
        if (!Files.exists(dir.resolve(base + LogSegment.LOG_SUFFIX))) {
          Files.delete(file);
        }
      }
    }
  }
}
