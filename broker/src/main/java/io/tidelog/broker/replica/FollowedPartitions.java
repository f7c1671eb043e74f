package io.tidelog.broker.replica;

import io.tidelog.broker.log.EpochEndOffset;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.MemoryRecords;

/**
 * The partitions a {@link ReplicaFetcher} fetches, as it sees them: where each fetches from next,
 * and where what it fetched goes. {@link ReplicaManager} implements it, on the partitions' shards;
 * every future completes there.
 */
interface FollowedPartitions {
  /**
   * Where a follower fetches {@code tp} from next, or empty if it no longer follows {@code
   * leaderId}.
   */
  CompletableFuture<Optional<FetchPosition>> fetchPosition(TopicPartition tp, int leaderId);

  /**
   * Applies what a fetch at {@code position} returned: the records, or a diverging epoch to
   * truncate to, and the leader's high watermark and log start offset.
   */
  CompletableFuture<Void> onFetched(
      TopicPartition tp,
      FetchPosition position,
      EpochEndOffset diverging,
      MemoryRecords records,
      long leaderHighWatermark,
      long leaderLogStartOffset);

  /** A fetch at {@code position} was out of the leader's range. */
  CompletableFuture<Void> onOutOfRange(
      TopicPartition tp,
      FetchPosition position,
      long leaderLogStartOffset,
      long leaderHighWatermark);
}
