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
   * Applies what a fetch from {@code leaderId} at {@code position} returned: the records, or a
   * diverging epoch to truncate to, and the leader's high watermark and log start offset. Completes
   * with where to fetch next, as {@link #fetchPosition} would answer right after.
   */
  CompletableFuture<Optional<FetchPosition>> onFetched(
      TopicPartition tp,
      int leaderId,
      FetchPosition position,
      EpochEndOffset diverging,
      MemoryRecords records,
      long leaderHighWatermark,
      long leaderLogStartOffset);

  /**
   * A fetch from {@code leaderId} at {@code position} was out of its range; completes with where to
   * fetch next.
   */
  CompletableFuture<Optional<FetchPosition>> onOutOfRange(
      TopicPartition tp,
      int leaderId,
      FetchPosition position,
      long leaderLogStartOffset,
      long leaderHighWatermark);
}
