package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.TopicConfigs;
import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.log.LogAppendInfo;
import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogManager;
import io.tidelog.broker.log.PartitionLog;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions this broker hosts, each owned by one storage shard: a single thread that makes
 * every call into that partition's {@link PartitionLog}, so the log's single-writer contract holds
 * without locks. Callers get futures and never block.
 *
 * <p>A single broker leads every partition at leader epoch 0; issue #4 adds followers, the ISR and
 * the high watermark. Until then the high watermark is the log end offset.
 */
public final class ReplicaManager implements AutoCloseable {
  static final int LEADER_EPOCH = 0;
  private static final int SHARD_QUEUE_CAPACITY = 10_000;
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaManager.class);

  private final LogManager logManager;
  private final MetadataStore metadata;
  private final Map<String, String> topicDefaults;
  private final ExecutorService[] shards;
  private final Map<TopicPartition, List<Runnable>> appendWaiters = new HashMap<>();

  public ReplicaManager(
      LogManager logManager,
      MetadataStore metadata,
      Map<String, String> topicDefaults,
      int shardCount) {
    this.logManager = logManager;
    this.metadata = metadata;
    this.topicDefaults = topicDefaults;
    this.shards = new ExecutorService[shardCount];
    for (int i = 0; i < shardCount; i++) {
      String name = "tidelog-shard-" + i;
      shards[i] =
          new ThreadPoolExecutor(
              1,
              1,
              0,
              TimeUnit.MILLISECONDS,
              new ArrayBlockingQueue<>(SHARD_QUEUE_CAPACITY),
              runnable -> new Thread(runnable, name));
    }
  }

  /** The effective log config of a topic: the broker's defaults under the topic's overrides. */
  public LogConfig logConfig(TopicMetadata topic) {
    return TopicConfigs.logConfig(topicDefaults, topic.configs());
  }

  /** Applies a topic's new configs to its live logs, each on its shard. */
  public CompletableFuture<Void> updateConfigs(TopicMetadata topic) {
    LogConfig config = logConfig(topic);
    List<CompletableFuture<Void>> updates = new ArrayList<>();
    for (int p = 0; p < topic.partitions(); p++) {
      updates.add(
          onShard(
              new TopicPartition(topic.name(), p),
              log -> {
                log.updateConfig(config);
                return null;
              }));
    }
    return CompletableFuture.allOf(updates.toArray(CompletableFuture[]::new));
  }

  /** Moves the log start offset up to {@code offset} (-1: the high watermark); returns it. */
  public CompletableFuture<Long> deleteRecordsBefore(TopicPartition tp, long offset) {
    return onShard(tp, log -> log.deleteRecordsBefore(offset < 0 ? log.logEndOffset() : offset));
  }

  public CompletableFuture<EpochEndOffset> endOffsetForEpoch(TopicPartition tp, int epoch) {
    return onShard(tp, log -> log.endOffsetForEpoch(epoch));
  }

  public Map<String, String> topicDefaults() {
    return topicDefaults;
  }

  public CompletableFuture<LogAppendInfo> append(TopicPartition tp, MemoryRecords records) {
    return onShard(
        tp,
        log -> {
          LogAppendInfo info = log.append(records, LEADER_EPOCH);
          wakeWaiters(tp);
          return info;
        });
  }

  /** Reads from {@code offset}; consumers see only what lies below the high watermark. */
  public CompletableFuture<PartitionRead> read(TopicPartition tp, long offset, int maxBytes) {
    return onShard(
        tp,
        log -> {
          long highWatermark = log.logEndOffset();
          return new PartitionRead(
              log.read(offset, maxBytes, highWatermark),
              highWatermark,
              log.logStartOffset(),
              log.logEndOffset());
        });
  }

  public CompletableFuture<PartitionOffsets> offsets(TopicPartition tp) {
    return onShard(tp, log -> new PartitionOffsets(log.logStartOffset(), log.logEndOffset()));
  }

  public CompletableFuture<Optional<TimestampAndOffset>> offsetForTimestamp(
      TopicPartition tp, long timestamp) {
    return onShard(tp, log -> log.offsetForTimestamp(timestamp));
  }

  public CompletableFuture<Optional<TimestampAndOffset>> maxTimestampRecord(TopicPartition tp) {
    return onShard(tp, PartitionLog::maxTimestampRecord);
  }

  /** Creates the logs of every partition of a new topic, each on its own shard. */
  public CompletableFuture<Void> createLogs(TopicMetadata topic) {
    List<CompletableFuture<PartitionLog>> created = new ArrayList<>();
    for (int p = 0; p < topic.partitions(); p++) {
      created.add(onShard(new TopicPartition(topic.name(), p), log -> log));
    }
    return CompletableFuture.allOf(created.toArray(CompletableFuture[]::new));
  }

  /** Deletes the logs of {@code partitions} partitions of {@code topic}. */
  public CompletableFuture<Void> deleteLogs(String topic, int partitions) {
    List<CompletableFuture<Void>> deleted = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      TopicPartition tp = new TopicPartition(topic, p);
      deleted.add(
          CompletableFuture.runAsync(
              () -> {
                try {
                  logManager.deleteLog(tp);
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
              },
              shard(tp)));
    }
    return CompletableFuture.allOf(deleted.toArray(CompletableFuture[]::new));
  }

  /**
   * Runs {@code waiter} once, after the next append to any of {@code partitions}. The caller
   * removes it with {@link #cancelWait} when it stops waiting for another reason.
   */
  public void awaitAppend(Collection<TopicPartition> partitions, Runnable waiter) {
    synchronized (appendWaiters) {
      partitions.forEach(
          tp -> appendWaiters.computeIfAbsent(tp, k -> new ArrayList<>()).add(waiter));
    }
  }

  public void cancelWait(Collection<TopicPartition> partitions, Runnable waiter) {
    synchronized (appendWaiters) {
      for (TopicPartition tp : partitions) {
        List<Runnable> waiters = appendWaiters.get(tp);
        if (waiters != null && waiters.remove(waiter) && waiters.isEmpty()) {
          appendWaiters.remove(tp);
        }
      }
    }
  }

  private void wakeWaiters(TopicPartition tp) {
    List<Runnable> waiters;
    synchronized (appendWaiters) {
      waiters = appendWaiters.remove(tp);
    }
    if (waiters != null) {
      waiters.forEach(Runnable::run);
    }
  }

  /** Applies retention and the flush policy to every log, each on its shard. */
  public void runLogMaintenance() {
    for (PartitionLog log : logManager.logs().values()) {
      if (!log.isOffline()) {
        shard(log.topicPartition())
            .execute(
                () -> {
                  try {
                    log.deleteOldSegments();
                    log.maybeFlush(System.currentTimeMillis());
                  } catch (RuntimeException e) {
                    LOG.warn("{}: log maintenance failed: {}", log.topicPartition(), e.toString());
                  }
                });
      }
    }
  }

  private <T> CompletableFuture<T> onShard(TopicPartition tp, Function<PartitionLog, T> work) {
    return CompletableFuture.supplyAsync(() -> work.apply(log(tp)), shard(tp));
  }

  private PartitionLog log(TopicPartition tp) {
    Optional<PartitionLog> existing = logManager.getLog(tp);
    if (existing.isPresent()) {
      return existing.get();
    }
    TopicMetadata topic =
        metadata
            .topic(tp.topic())
            .filter(t -> tp.partition() >= 0 && tp.partition() < t.partitions())
            .orElseThrow(
                () -> new UnknownTopicOrPartitionException("This server does not host " + tp));
    return logManager.getOrCreateLog(tp, logConfig(topic));
  }

  private ExecutorService shard(TopicPartition tp) {
    return shards[Math.floorMod(tp.hashCode(), shards.length)];
  }

  @Override
  public void close() throws InterruptedException {
    for (ExecutorService shard : shards) {
      shard.shutdown();
    }
    for (ExecutorService shard : shards) {
      shard.awaitTermination(30, TimeUnit.SECONDS);
    }
  }
}
