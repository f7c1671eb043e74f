package io.tidelog.broker.replica;

import io.tidelog.broker.log.LogManager;
import io.tidelog.broker.log.PartitionLog;
import io.tidelog.broker.quota.ReplicationQuota;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The moves of replicas between this broker's log directories (AlterReplicaLogDirs), as Kafka's
 * {@code ReplicaAlterLogDirsManager}: each replica moving has a {@link FutureReplica} in its new
 * directory, filled from the current log a step at a time, each step on the partition's shard
 * behind the client work queued there, at most {@value #STEP_BYTES} bytes, all steps together
 * within {@code replica.alter.log.dirs.io.max.bytes.per.second}. The step that finds the future log
 * holding all the current one holds puts it in place: no write can come between, as every write of
 * the partition runs on that shard too. A replica that leaves the broker abandons its move.
 */
final class LogDirMoves {
  private static final Logger LOG = LoggerFactory.getLogger(LogDirMoves.class);

  /** The bytes one step copies at most: {@code replica.fetch.max.bytes}' default. */
  static final int STEP_BYTES = 1024 * 1024;

  /** How long a move waits when the throttle or a compaction pass holds it. */
  private static final long BACKOFF_MS = 100;

  private final Map<TopicPartition, FutureReplica> futures = new ConcurrentHashMap<>();
  private final LogManager logManager;
  private final ReplicationQuota quota;
  private final ScheduledExecutorService timer;
  private final Function<TopicPartition, Executor> clientExecutor;
  private final Function<TopicPartition, Partition> hosted;
  private final Predicate<TopicPartition> cleaning;

  /**
   * @param clientExecutor the client work queue of a partition's shard
   * @param hosted the replica here of a partition, or null
   * @param cleaning whether a compaction pass of a partition is under way
   */
  LogDirMoves(
      LogManager logManager,
      ReplicationQuota quota,
      ScheduledExecutorService timer,
      Function<TopicPartition, Executor> clientExecutor,
      Function<TopicPartition, Partition> hosted,
      Predicate<TopicPartition> cleaning) {
    this.logManager = logManager;
    this.quota = quota;
    this.timer = timer;
    this.clientExecutor = clientExecutor;
    this.hosted = hosted;
    this.cleaning = cleaning;
  }

  /**
   * Moves {@code partition}'s replica to {@code dir}, as Kafka does: a move elsewhere is abandoned
   * first; a replica there already, or moving there, stays as it is; no move starts while some log
   * directory is offline. Shard only.
   *
   * @throws KafkaStorageException when a directory is offline or the future log cannot be created
   */
  void move(Partition partition, Path dir, Uuid topicId) {
    TopicPartition tp = partition.tp;
    FutureReplica moving = futures.get(tp);
    if (moving != null && !moving.dir().equals(dir)) {
      abandon(tp);
    }
    if (partition.logDir().equals(dir) || futures.containsKey(tp)) {
      return;
    }
    if (!logManager.offlineDirs().isEmpty()) {
      throw new KafkaStorageException(
          "No replica moves while log directories " + logManager.offlineDirs() + " are offline");
    }
    PartitionLog future = logManager.createFutureLog(tp, dir, topicId, partition.logConfig());
    futures.put(tp, new FutureReplica(future, -1)); // -1: the first step starts it afresh
    LOG.info("{}: moving from {} to {}", tp, partition.logDir(), dir);
    later(tp, 0);
  }

  /** Abandons the move of {@code tp}, if it has one, deleting its future log. Shard only. */
  void abandon(TopicPartition tp) {
    if (futures.remove(tp) != null) {
      logManager.deleteFutureLog(tp);
      LOG.info("{}: abandoned its move to another log directory", tp);
    }
  }

  /** A snapshot of every future replica, each taken on its shard. */
  CompletableFuture<List<FutureReplicaStatus>> statuses() {
    List<CompletableFuture<FutureReplicaStatus>> statuses = new ArrayList<>();
    futures.forEach(
        (tp, future) ->
            statuses.add(
                CompletableFuture.supplyAsync(
                    () -> {
                      Partition partition = hosted.apply(tp);
                      PartitionLog log = future.log();
                      return new FutureReplicaStatus(
                          tp,
                          future.dir().toString(),
                          log.sizeInBytes(),
                          partition == null
                              ? -1
                              : Math.max(partition.logEndOffset() - log.logEndOffset(), 0));
                    },
                    clientExecutor.apply(tp))));
    return CompletableFuture.allOf(statuses.toArray(CompletableFuture[]::new))
        .thenApply(done -> statuses.stream().map(CompletableFuture::join).toList());
  }

  private void later(TopicPartition tp, long delayMs) {
    Runnable step =
        () -> {
          try {
            clientExecutor.apply(tp).execute(() -> step(tp));
          } catch (RejectedExecutionException e) {
            // the broker is closing: the next start deletes the future log
          }
        };
    if (delayMs == 0) {
      step.run();
    } else {
      try {
        timer.schedule(step, delayMs, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        // the broker is closing
      }
    }
  }

  private void step(TopicPartition tp) {
    FutureReplica future = futures.get(tp);
    if (future == null) {
      return;
    }
    Partition partition = hosted.apply(tp);
    if (partition == null) {
      abandon(tp);
      return;
    }
    if (quota.isExceeded()) {
      later(tp, BACKOFF_MS);
      return;
    }
    try {
      long before = future.log().sizeInBytes();
      boolean holdsAll = partition.copyTo(future, STEP_BYTES);
      quota.record(Math.max(future.log().sizeInBytes() - before, 0));
      if (!holdsAll) {
        later(tp, 0);
      } else if (cleaning.test(tp)) {
        later(tp, BACKOFF_MS); // the pass would swap its segments into the log that goes
      } else {
        partition.replaceLog(future, () -> logManager.replaceWithFutureLog(tp));
        futures.remove(tp);
        LOG.info("{}: moved to {}", tp, future.dir());
      }
    } catch (RuntimeException e) { // a directory failed, or a batch did not copy: not moved
      LOG.error("{}: the move to {} failed: {}", tp, future.dir(), e.toString());
      abandon(tp);
    }
  }
}
