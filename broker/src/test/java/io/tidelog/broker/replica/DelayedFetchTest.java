package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * A waiting Fetch reads again on completion only the partitions that changed since its first read:
 * an idle partition of a follower's fetch costs its shard no second hop.
 */
class DelayedFetchTest {
  private static final TopicPartition IDLE = new TopicPartition("t", 0);
  private static final TopicPartition BUSY = new TopicPartition("t", 1);
  private static final TopicPartition QUIET = new TopicPartition("t", 2);
  private static final FetchParams FOLLOWER =
      new FetchParams(1, 500, 1, 1 << 20, IsolationLevel.READ_UNCOMMITTED);

  /** The bytes each partition has now, as its shard would tell. */
  private final Map<TopicPartition, Long> available = new ConcurrentHashMap<>();

  /** The indexes the completion asked to read again; null for every partition. */
  private final AtomicReference<List<Integer>> readAgain = new AtomicReference<>();

  private DelayedFetch waiting(long... bytesRead) {
    return waiting(FOLLOWER, bytesRead);
  }

  private DelayedFetch waiting(FetchParams params, long... bytesRead) {
    List<PartitionFetch> partitions =
        List.of(IDLE, BUSY, QUIET).stream()
            .map(tp -> new PartitionFetch(tp, 10, 0, 0, 1 << 20))
            .toList();
    partitions.forEach(p -> available.put(p.tp(), 0L));
    return new DelayedFetch(
        params,
        partitions,
        bytesRead,
        p -> available.get(p.tp()),
        again -> {
          readAgain.set(again);
          return CompletableFuture.completedFuture(List.of());
        });
  }

  @Test
  void anAppendReadsAgainOnlyThePartitionsThatChanged() {
    DelayedFetch fetch = waiting(0, 0, 0);
    fetch.recheck(IDLE);
    fetch.recheck(BUSY);
    fetch.recheck(QUIET);
    fetch.tryComplete(QUIET); // a high-watermark move: no bytes for a follower, but news
    assertThat(fetch.isCompleted()).isFalse();

    available.put(BUSY, 1024L);
    fetch.tryComplete(BUSY);

    assertThat(fetch.result()).isCompleted();
    assertThat(readAgain.get()).containsExactly(1, 2);
  }

  @Test
  void aRecheckThatFindsBytesReadsThatPartitionAgain() {
    DelayedFetch fetch = waiting(0, 0, 0);
    available.put(IDLE, 100L); // appended between the first read and the watch

    fetch.recheck(IDLE);

    assertThat(fetch.result()).isCompleted();
    assertThat(readAgain.get()).containsExactly(0);
  }

  @Test
  void aPartitionThatMustBeAnsweredNowIsReadAgain() {
    DelayedFetch fetch = waiting(0, 0, 0);
    available.put(QUIET, DelayedFetch.ANSWER_NOW); // led elsewhere now

    fetch.tryComplete(QUIET);

    assertThat(readAgain.get()).containsExactly(2);
  }

  @Test
  void whatTheFirstReadFoundIsReadAgain() {
    FetchParams consumer = new FetchParams(-1, 500, 1000, 1 << 20, IsolationLevel.READ_UNCOMMITTED);
    DelayedFetch fetch = waiting(consumer, 0, 0, 512); // fewer than min.bytes
    available.put(QUIET, 512L);
    fetch.recheck(QUIET);
    assertThat(fetch.isCompleted()).isFalse();

    available.put(BUSY, 1024L);
    fetch.tryComplete(BUSY);

    assertThat(readAgain.get()).containsExactly(1, 2);
  }

  @Test
  void anExpiredFetchReadsEveryPartitionAgain() {
    DelayedFetch fetch = waiting(0, 0, 0);
    fetch.tryComplete(BUSY);
    readAgain.set(List.of(-1));

    fetch.expire();

    assertThat(readAgain.get()).isNull();
  }
}
