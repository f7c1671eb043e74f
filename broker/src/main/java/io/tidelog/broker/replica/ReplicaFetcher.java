package io.tidelog.broker.replica;

import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.quota.ReplicationQuota;
import io.vertx.core.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches every partition this broker follows from one leader, as Kafka's replica fetcher does: a
 * loop of Fetch requests to its {@link LeaderEndpoint}, carrying each partition's fetch offset (its
 * LEO), current leader epoch and last fetched epoch, so that the leader can report a diverging
 * epoch. Each response is applied to the {@link FollowedPartitions}, on the partitions' shards,
 * before the next request; the leader's long poll ({@code replica.fetch.wait.max.ms}) paces the
 * loop when idle. While the follower {@link ReplicationQuota} is exceeded, a throttled partition
 * that is behind is left out of the request, as Kafka's {@code shouldFollowerThrottle} does; what
 * throttled partitions fetch counts against it.
 */
final class ReplicaFetcher {
  private static final int BACKOFF_MS = 500;
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

  private final int leaderId;
  private final LeaderEndpoint leader;
  private final FollowedPartitions followed;
  private final ReplicationQuota quota;
  private final Set<TopicPartition> partitions = ConcurrentHashMap.newKeySet();

  /** The event-loop context the fetch loop and its leader's connection live on. */
  private final Context context;

  private volatile boolean running;

  ReplicaFetcher(
      int leaderId,
      Context context,
      LeaderEndpoint leader,
      FollowedPartitions followed,
      ReplicationQuota quota) {
    this.leaderId = leaderId;
    this.context = context;
    this.leader = leader;
    this.followed = followed;
    this.quota = quota;
  }

  void add(TopicPartition tp) {
    partitions.add(tp);
  }

  /** Stops fetching {@code tp}; returns whether no partition is left. */
  boolean remove(TopicPartition tp) {
    partitions.remove(tp);
    return partitions.isEmpty();
  }

  void start() {
    running = true;
    context.runOnContext(v -> round());
  }

  void stop() {
    running = false;
  }

  private void later() {
    context.runOnContext(v -> context.owner().setTimer(BACKOFF_MS, id -> round()));
  }

  private void round() {
    if (!running) {
      leader.close();
      return;
    }
    Map<TopicPartition, CompletableFuture<Optional<FetchPosition>>> positions =
        new LinkedHashMap<>();
    for (TopicPartition tp : partitions) {
      positions.put(tp, followed.fetchPosition(tp, leaderId));
    }
    if (positions.isEmpty()) {
      later();
      return;
    }
    CompletableFuture.allOf(positions.values().toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) ->
                context.runOnContext(
                    x -> {
                      Map<TopicPartition, FetchPosition> ready = new LinkedHashMap<>();
                      positions.forEach(
                          (tp, f) -> {
                            if (!f.isCompletedExceptionally()) {
                              f.join().ifPresent(p -> ready.put(tp, p));
                            }
                          });
                      if (quota.isExceeded()) {
                        ready.values().removeIf(FetchPosition::holdsBackWhenExceeded);
                      }
                      if (ready.isEmpty()) {
                        later();
                      } else {
                        fetch(ready);
                      }
                    }));
  }

  private void fetch(Map<TopicPartition, FetchPosition> positions) {
    leader
        .fetch(positions)
        .onSuccess(response -> apply(response, positions))
        .onFailure(
            e -> {
              if (e instanceof LeaderNotAvailableException) {
                LOG.debug("Not fetching: {}", e.getMessage());
              } else {
                LOG.warn("Fetching from leader {} failed: {}", leaderId, e.getMessage());
              }
              later();
            });
  }

  private void apply(FetchResponse response, Map<TopicPartition, FetchPosition> positions) {
    List<CompletableFuture<Void>> applied = new ArrayList<>();
    boolean[] progressed = {false};
    response
        .responseData(Map.of(), LeaderEndpoint.FETCH_VERSION)
        .forEach(
            (tp, data) -> {
              FetchPosition position = positions.get(tp);
              if (position != null) {
                applied.add(applyOne(tp, position, data, progressed));
              }
            });
    CompletableFuture.allOf(applied.toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) -> {
              if (e != null) {
                LOG.warn("Applying fetched data from leader {} failed: {}", leaderId, e.toString());
              }
              if (progressed[0]) {
                context.runOnContext(x -> round());
              } else {
                later();
              }
            });
  }

  private CompletableFuture<Void> applyOne(
      TopicPartition tp, FetchPosition position, PartitionData data, boolean[] progressed) {
    Errors error = Errors.forCode(data.errorCode());
    switch (error) {
      case NONE -> {
        progressed[0] = true;
        if (position.throttled()) {
          quota.record(data.records().sizeInBytes());
        }
        EpochEndOffset diverging =
            data.divergingEpoch().epoch() < 0
                ? null
                : new EpochEndOffset(
                    data.divergingEpoch().epoch(), data.divergingEpoch().endOffset());
        return followed.onFetched(
            tp,
            position,
            diverging,
            (MemoryRecords) data.records(),
            data.highWatermark(),
            data.logStartOffset());
      }
      case OFFSET_OUT_OF_RANGE -> {
        progressed[0] = true;
        return followed.onOutOfRange(tp, position, data.logStartOffset(), data.highWatermark());
      }
      default -> {
        LOG.debug("{}: leader {} answered {}", tp, leaderId, error);
        return CompletableFuture.completedFuture(null);
      }
    }
  }
}
