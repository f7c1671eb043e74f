package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.PartitionFetch;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchResponse;

/**
 * An incremental fetch session (KIP-227), as Kafka's {@code FetchSession}: the partitions a fetcher
 * reads, with what it last asked of each (offset, epochs, max bytes) and what it was last told
 * (high watermark, log start offset). An incremental request names only the partitions whose asks
 * changed, and forgets others; its answer names only the partitions with something new: records, an
 * error, a diverging epoch, or a moved high watermark or log start offset. A partition that
 * returned records moves to the end, so that under {@code max.bytes} the others get their turn.
 *
 * <p>Guarded by its own lock: a fetcher's requests use it one at a time, by its epoch.
 */
final class FetchSession {
  final int id;
  final boolean privileged;
  private final Map<TopicPartition, Cached> partitions = new LinkedHashMap<>();

  /** The epoch the next incremental request must carry. */
  private int epoch = FetchMetadata.nextEpoch(FetchMetadata.INITIAL_EPOCH);

  private long lastUsedMs;

  /** One partition of the session: the fetcher's last ask, and what it was last told. */
  private static final class Cached {
    PartitionFetch ask;
    long highWatermark;
    long logStartOffset;

    Cached(PartitionFetch ask, long highWatermark, long logStartOffset) {
      this.ask = ask;
      this.highWatermark = highWatermark;
      this.logStartOffset = logStartOffset;
    }

    /** Whether {@code told} must be sent; remembers what it tells. As Kafka's CachedPartition. */
    boolean mustSend(PartitionData told) {
      boolean must = FetchResponse.recordsSize(told) > 0 || FetchResponse.isDivergingEpoch(told);
      if (highWatermark != told.highWatermark()) {
        highWatermark = told.highWatermark();
        must = true;
      }
      if (logStartOffset != told.logStartOffset()) {
        logStartOffset = told.logStartOffset();
        must = true;
      }
      if (told.errorCode() != Errors.NONE.code()) {
        highWatermark = -1; // sent again once the error is gone
        must = true;
      }
      return must;
    }
  }

  /** A session of the partitions a full fetch was answered, in its order. */
  FetchSession(
      int id,
      boolean privileged,
      List<PartitionFetch> asked,
      Map<TopicPartition, PartitionData> answered,
      long nowMs) {
    this.id = id;
    this.privileged = privileged;
    this.lastUsedMs = nowMs;
    for (PartitionFetch ask : asked) {
      PartitionData told = answered.get(ask.tp());
      if (told != null) {
        partitions.put(ask.tp(), new Cached(ask, told.highWatermark(), told.logStartOffset()));
      }
    }
  }

  synchronized int size() {
    return partitions.size();
  }

  synchronized long lastUsedMs() {
    return lastUsedMs;
  }

  /**
   * An incremental request at {@code requestEpoch}: takes its asks and forgets, and returns the
   * partitions to read, in session order; null when the epoch is not the one expected.
   */
  synchronized List<PartitionFetch> update(
      int requestEpoch,
      Collection<PartitionFetch> asked,
      Collection<TopicPartition> forgotten,
      long nowMs) {
    if (requestEpoch != epoch) {
      return null;
    }
    epoch = FetchMetadata.nextEpoch(epoch);
    lastUsedMs = nowMs;
    for (PartitionFetch ask : asked) {
      Cached cached = partitions.get(ask.tp());
      if (cached == null) {
        partitions.put(ask.tp(), new Cached(ask, -1, -1)); // told nothing yet
      } else {
        cached.ask = ask;
      }
    }
    forgotten.forEach(partitions::remove);
    List<PartitionFetch> reads = new ArrayList<>(partitions.size());
    partitions.values().forEach(c -> reads.add(c.ask));
    return reads;
  }

  /**
   * The answer to the request that {@link #update} at {@code requestEpoch} returned the reads of:
   * {@code answered} (in read order) less what is not new, or null when another request used the
   * session since.
   */
  synchronized LinkedHashMap<TopicPartition, PartitionData> answer(
      int requestEpoch, Map<TopicPartition, PartitionData> answered) {
    if (epoch != FetchMetadata.nextEpoch(requestEpoch)) {
      return null;
    }
    LinkedHashMap<TopicPartition, PartitionData> sent = new LinkedHashMap<>();
    List<TopicPartition> withRecords = new ArrayList<>();
    for (Map.Entry<TopicPartition, PartitionData> entry : answered.entrySet()) {
      Cached cached = partitions.get(entry.getKey());
      if (cached == null || cached.mustSend(entry.getValue())) {
        sent.put(entry.getKey(), entry.getValue());
        if (FetchResponse.recordsSize(entry.getValue()) > 0) {
          withRecords.add(entry.getKey());
        }
      }
    }
    for (TopicPartition tp : withRecords) {
      Cached cached = partitions.remove(tp);
      if (cached != null) {
        partitions.put(tp, cached);
      }
    }
    return sent;
  }

  /** Whether this session holds no partition any more. */
  synchronized boolean isEmpty() {
    return partitions.isEmpty();
  }
}
