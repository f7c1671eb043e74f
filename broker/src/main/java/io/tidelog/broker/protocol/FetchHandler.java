package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.PartitionRead;
import io.tidelog.broker.replica.ReplicaManager;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchRequestData.FetchPartition;
import org.apache.kafka.common.message.FetchRequestData.FetchTopic;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Fetch, as full requests (session id 0): every requested partition is answered once (a partition
 * named twice counts once, its last entry). Partitions are read in request order within the smaller
 * of the request's {@code max.bytes} and the broker's {@code fetch.max.bytes}, and each one's
 * {@code partition_max_bytes}; the first batch is returned even when larger (KIP-74). Records go
 * out as file regions.
 *
 * <p>Long poll: while fewer than {@code min.bytes} are available, the response waits for appends
 * and high-watermark moves on the requested partitions, up to {@code max.wait.ms}.
 */
public final class FetchHandler {
  private final ReplicaManager replicas;
  private final Vertx vertx;
  private final TopicMetrics metrics;
  private final int fetchMaxBytes;

  /**
   * @param fetchMaxBytes the broker's {@code fetch.max.bytes}: no response carries more record
   *     bytes than this (but a first batch that is larger), whatever the request asks
   */
  public FetchHandler(
      ReplicaManager replicas, Vertx vertx, TopicMetrics metrics, int fetchMaxBytes) {
    this.replicas = replicas;
    this.vertx = vertx;
    this.metrics = metrics;
    this.fetchMaxBytes = fetchMaxBytes;
  }

  CompletableFuture<FetchResponse> handle(RequestHeader header, AbstractRequest request) {
    FetchRequestData data = ((FetchRequest) request).data();
    Map<TopicPartition, FetchPartition> wanted = partitions(data);
    List<TopicPartition> partitions = List.copyOf(wanted.keySet());
    long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(data.maxWaitMs());
    boolean byFollower = FetchRequest.replicaId(data) >= 0;
    return readUntil(data, wanted, header, partitions, deadlineNanos)
        .thenApply(
            result -> {
              count(result.topics(), byFollower);
              return FetchResponse.of(
                  new FetchResponseData()
                      .setErrorCode(Errors.NONE.code())
                      .setSessionId(0)
                      .setResponses(result.topics()));
            });
  }

  /**
   * The request's partitions, each once: a partition named again replaces its earlier entry, as
   * Kafka keeps a fetch's partitions in a map, so the cost of a request is linear in its size.
   */
  private static Map<TopicPartition, FetchPartition> partitions(FetchRequestData data) {
    Map<TopicPartition, FetchPartition> partitions = new LinkedHashMap<>();
    for (FetchTopic topic : data.topics()) {
      for (FetchPartition partition : topic.partitions()) {
        partitions.put(new TopicPartition(topic.topic(), partition.partition()), partition);
      }
    }
    return partitions;
  }

  private void count(List<FetchableTopicResponse> topics, boolean byFollower) {
    for (FetchableTopicResponse topic : topics) {
      for (PartitionData partition : topic.partitions()) {
        if (partition.errorCode() != Errors.NONE.code()) {
          metrics.fetchFailed(topic.topic());
        } else {
          metrics.fetched(topic.topic(), partition.records().sizeInBytes(), byFollower);
        }
      }
    }
  }

  /**
   * Reads, and while fewer than {@code min.bytes} came back and the deadline has not passed, waits
   * for the next append or high-watermark move on a requested partition and reads again. The waiter
   * is registered before each read, so no wake-up between the read and the wait is lost.
   */
  private CompletableFuture<FetchResult> readUntil(
      FetchRequestData data,
      Map<TopicPartition, FetchPartition> wanted,
      RequestHeader header,
      List<TopicPartition> partitions,
      long deadlineNanos) {
    boolean mayWait = data.maxWaitMs() > 0 && data.minBytes() > 0;
    CompletableFuture<Void> woken = new CompletableFuture<>();
    Runnable waiter = () -> woken.complete(null);
    if (mayWait) {
      replicas.awaitAppend(partitions, waiter);
    }
    return readAll(data, wanted, header)
        .thenCompose(
            result -> {
              long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
              if (!mayWait
                  || result.bytes() >= data.minBytes()
                  || result.hasError()
                  || leftMs <= 0) {
                replicas.cancelWait(partitions, waiter);
                return CompletableFuture.completedFuture(result);
              }
              long timer = vertx.setTimer(leftMs, id -> woken.complete(null));
              return woken.thenCompose(
                  v -> {
                    vertx.cancelTimer(timer);
                    replicas.cancelWait(partitions, waiter);
                    return readUntil(data, wanted, header, partitions, deadlineNanos);
                  });
            });
  }

  private CompletableFuture<FetchResult> readAll(
      FetchRequestData data, Map<TopicPartition, FetchPartition> wanted, RequestHeader header) {
    int replicaId = FetchRequest.replicaId(data);
    FetchResult result =
        new FetchResult(new ArrayList<>(), Math.min(data.maxBytes(), fetchMaxBytes));
    Map<String, FetchableTopicResponse> topics = new LinkedHashMap<>();
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (Map.Entry<TopicPartition, FetchPartition> entry : wanted.entrySet()) {
      TopicPartition tp = entry.getKey();
      FetchableTopicResponse topicResponse =
          topics.computeIfAbsent(
              tp.topic(),
              name -> {
                FetchableTopicResponse created = new FetchableTopicResponse().setTopic(name);
                result.topics().add(created);
                return created;
              });
      chain =
          chain
              .thenCompose(v -> readOne(tp, entry.getValue(), replicaId, result, header))
              .thenAccept(topicResponse.partitions()::add);
    }
    return chain.thenApply(v -> result);
  }

  private CompletableFuture<PartitionData> readOne(
      TopicPartition tp,
      FetchPartition partition,
      int replicaId,
      FetchResult result,
      RequestHeader header) {
    PartitionData response = new PartitionData().setPartitionIndex(tp.partition());
    int budget = Math.min(partition.partitionMaxBytes(), result.remainingBytes());
    CompletableFuture<PartitionData> read;
    if (budget <= 0) {
      read =
          replicas
              .offsets(tp)
              .thenApply(
                  offsets ->
                      response
                          .setHighWatermark(offsets.highWatermark())
                          .setLastStableOffset(offsets.highWatermark())
                          .setLogStartOffset(offsets.logStartOffset())
                          .setRecords(MemoryRecords.EMPTY));
    } else if (replicaId >= 0) {
      read =
          replicas
              .readForFollower(
                  tp,
                  replicaId,
                  partition.fetchOffset(),
                  partition.lastFetchedEpoch(),
                  partition.currentLeaderEpoch(),
                  budget)
              .thenApply(r -> withRecords(response, r, result));
    } else {
      read =
          replicas
              .read(tp, partition.fetchOffset(), budget, partition.currentLeaderEpoch())
              .thenApply(r -> withRecords(response, r, result));
    }
    return read.exceptionallyCompose(
        e -> {
          result.markError();
          Errors error = ErrorMapping.errorOf(e, header);
          PartitionData failed =
              response
                  .setErrorCode(error.code())
                  .setHighWatermark(FetchResponse.INVALID_HIGH_WATERMARK)
                  .setRecords(MemoryRecords.EMPTY);
          if (error != Errors.OFFSET_OUT_OF_RANGE || replicaId < 0) {
            return CompletableFuture.completedFuture(failed);
          }
          // A follower outside the leader's log restarts from its log start or its HW
          return replicas
              .offsets(tp)
              .handle(
                  (offsets, unavailable) ->
                      offsets == null
                          ? failed
                          : failed
                              .setHighWatermark(offsets.highWatermark())
                              .setLogStartOffset(offsets.logStartOffset()));
        });
  }

  private static PartitionData withRecords(
      PartitionData response, PartitionRead read, FetchResult result) {
    if (read.divergingEpoch() != null) {
      response
          .divergingEpoch()
          .setEpoch(read.divergingEpoch().epoch())
          .setEndOffset(read.divergingEpoch().endOffset());
      return response
          .setErrorCode(Errors.NONE.code())
          .setHighWatermark(read.highWatermark())
          .setLastStableOffset(read.highWatermark())
          .setLogStartOffset(read.logStartOffset())
          .setRecords(MemoryRecords.EMPTY);
    }
    int bytes = read.read().records().sizeInBytes();
    result.add(bytes);
    return response
        .setErrorCode(Errors.NONE.code())
        .setHighWatermark(read.highWatermark())
        .setLastStableOffset(read.highWatermark())
        .setLogStartOffset(read.logStartOffset())
        .setRecords(read.read().records());
  }

  /** The responses so far, and the bytes they hold against the request's {@code max.bytes}. */
  private static final class FetchResult {
    private final List<FetchableTopicResponse> topics;
    private final int maxBytes;
    private int bytes;
    private boolean hasError;

    FetchResult(List<FetchableTopicResponse> topics, int maxBytes) {
      this.topics = topics;
      this.maxBytes = maxBytes;
    }

    List<FetchableTopicResponse> topics() {
      return topics;
    }

    int bytes() {
      return bytes;
    }

    int remainingBytes() {
      return maxBytes - bytes;
    }

    boolean hasError() {
      return hasError;
    }

    void add(int readBytes) {
      bytes += readBytes;
    }

    void markError() {
      hasError = true;
    }
  }
}
