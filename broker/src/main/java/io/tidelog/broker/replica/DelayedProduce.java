package io.tidelog.broker.replica;

import io.tidelog.broker.log.LogAppendInfo;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * An {@code acks=all} append waiting for the high watermark to pass it, as Kafka's {@code
 * DelayedProduce}. Checked on its partition's shard: it succeeds once the high watermark reaches
 * {@code requiredOffset}; fails with NOT_LEADER_OR_FOLLOWER once this broker no longer leads the
 * partition at the epoch it appended in, with NOT_ENOUGH_REPLICAS_AFTER_APPEND once the ISR is
 * below {@code min.insync.replicas} (so the high watermark cannot reach it), and with
 * REQUEST_TIMED_OUT when its timeout passes first.
 */
final class DelayedProduce extends DelayedOperation {
  private final Partition partition;
  private final int leaderEpoch;
  private final LogAppendInfo info;
  private final CompletableFuture<LogAppendInfo> result = new CompletableFuture<>();
  private volatile RuntimeException failure;

  DelayedProduce(Partition partition, int leaderEpoch, LogAppendInfo info) {
    this.partition = partition;
    this.leaderEpoch = leaderEpoch;
    this.info = info;
  }

  CompletableFuture<LogAppendInfo> result() {
    return result;
  }

  private long requiredOffset() {
    return info.lastOffset() + 1;
  }

  @Override
  void tryComplete(TopicPartition key) {
    if (!partition.isLeader() || partition.leaderEpoch() != leaderEpoch) {
      failure =
          new NotLeaderOrFollowerException(
              "Broker no longer leads "
                  + partition.tp
                  + " at epoch "
                  + leaderEpoch
                  + " (leader: "
                  + partition.leaderId()
                  + ")");
      forceComplete();
    } else if (partition.highWatermark() >= requiredOffset()) {
      forceComplete();
    } else if (partition.isrBelowMinimum()) {
      failure = new NotEnoughReplicasAfterAppendException(partition.isrShortfall());
      forceComplete();
    }
  }

  @Override
  void onComplete(boolean expired) {
    if (expired) {
      result.completeExceptionally(
          new TimeoutException(
              "The ISR of "
                  + partition.tp
                  + " did not replicate offset "
                  + info.lastOffset()
                  + " in time"));
    } else if (failure != null) {
      result.completeExceptionally(failure);
    } else {
      result.complete(info);
    }
  }
}
