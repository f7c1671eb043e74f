package io.tidelog.broker.log;

import java.util.Collection;
import java.util.List;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The segments of one partition log, by base offset, as Kafka's {@code LogSegments}: never empty
 * once the log is loaded, and the segment with the largest base offset is the active one, which
 * takes appends.
 *
 * <p>Threading: changed only by the log's owner; any thread may read it (the log's getters, the
 * cleaner planning a pass) and sees each segment either in or out, never a torn map. The
 * collections returned are live views, in offset order; callers that change the segments while
 * walking them walk a copy.
 */
final class LogSegments {
  private final NavigableMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();

  /** Adds {@code segment}, or puts it in place of the one with its base offset. */
  void add(LogSegment segment) {
    segments.put(segment.baseOffset(), segment);
  }

  /** Removes {@code segment}; its files stay until the caller deletes them. */
  void remove(LogSegment segment) {
    segments.remove(segment.baseOffset(), segment);
  }

  /** Removes and returns every segment whose base offset is above {@code offset}. */
  List<LogSegment> removeAbove(long offset) {
    List<LogSegment> removed = List.copyOf(segments.tailMap(offset, false).values());
    removed.forEach(this::remove);
    return removed;
  }

  /** Removes and returns every segment. */
  List<LogSegment> removeAll() {
    List<LogSegment> removed = List.copyOf(segments.values());
    segments.clear();
    return removed;
  }

  /** Whether {@code segment} itself, not only one with its base offset, is in the log. */
  boolean holds(LogSegment segment) {
    return segments.get(segment.baseOffset()) == segment;
  }

  boolean isEmpty() {
    return segments.isEmpty();
  }

  int size() {
    return segments.size();
  }

  LogSegment active() {
    return segments.lastEntry().getValue();
  }

  LogSegment oldest() {
    return segments.firstEntry().getValue();
  }

  long firstBaseOffset() {
    return segments.firstKey();
  }

  /**
   * The base offset of the segment that holds {@code offset}: the largest at most {@code offset},
   * or the first when every segment starts above it.
   */
  long baseOffsetHolding(long offset) {
    Long floor = segments.floorKey(offset);
    return floor == null ? segments.firstKey() : floor;
  }

  /**
   * Where {@code segment}'s offsets end: the base offset of the next segment, or {@code
   * logEndOffset} for the active one.
   */
  long endOffsetOf(LogSegment segment, long logEndOffset) {
    Long next = segments.higherKey(segment.baseOffset());
    return next == null ? logEndOffset : next;
  }

  Collection<LogSegment> all() {
    return segments.values();
  }

  /** The segment that holds {@code offset} and every one after it. */
  Collection<LogSegment> from(long offset) {
    return segments.tailMap(baseOffsetHolding(offset), true).values();
  }

  /** The segments whose base offset is below {@code offset}. */
  Collection<LogSegment> below(long offset) {
    return segments.headMap(offset, false).values();
  }

  long sizeInBytes() {
    long bytes = 0;
    for (LogSegment segment : segments.values()) {
      bytes += segment.sizeInBytes();
    }
    return bytes;
  }

  /** Closes every segment's file handles, as when the log's directory fails. */
  void closeHandlers() {
    segments.values().forEach(LogSegment::closeHandlers);
  }
}
