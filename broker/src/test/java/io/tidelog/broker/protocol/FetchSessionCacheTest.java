package io.tidelog.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.tidelog.broker.replica.PartitionFetch;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.FetchMetadata;
import org.junit.jupiter.api.Test;

/** KIP-227's sessions as Kafka keeps them: epochs, what an incremental answer leaves out, slots. */
class FetchSessionCacheTest {
  private static final TopicPartition A = new TopicPartition("t", 0);
  private static final TopicPartition B = new TopicPartition("t", 1);
  private static final TopicPartition C = new TopicPartition("u", 0);

  private static PartitionFetch ask(TopicPartition tp, long offset) {
    return new PartitionFetch(tp, offset, -1, -1, 1 << 20);
  }

  private static Map.Entry<TopicPartition, PartitionData> told(TopicPartition tp, long hw) {
    return Map.entry(
        tp,
        new PartitionData()
            .setPartitionIndex(tp.partition())
            .setHighWatermark(hw)
            .setLogStartOffset(0)
            .setRecords(MemoryRecords.EMPTY));
  }

  private static Map.Entry<TopicPartition, PartitionData> withRecords(TopicPartition tp, long hw) {
    Map.Entry<TopicPartition, PartitionData> entry = told(tp, hw);
    entry
        .getValue()
        .setRecords(
            MemoryRecords.withRecords(0L, Compression.NONE, new SimpleRecord("v".getBytes())));
    return entry;
  }

  private static Map.Entry<TopicPartition, PartitionData> failed(TopicPartition tp, long hw) {
    Map.Entry<TopicPartition, PartitionData> entry = told(tp, hw);
    entry.getValue().setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
    return entry;
  }

  @SafeVarargs
  private static LinkedHashMap<TopicPartition, PartitionData> answers(
      Map.Entry<TopicPartition, PartitionData>... told) {
    LinkedHashMap<TopicPartition, PartitionData> map = new LinkedHashMap<>();
    for (Map.Entry<TopicPartition, PartitionData> entry : told) {
      map.put(entry.getKey(), entry.getValue());
    }
    return map;
  }

  /** A full fetch of A, B and C at high watermark 5: the new session's id. */
  private static int open(FetchSessionCache cache, boolean follower, long nowMs) {
    FetchSessionCache.Context full =
        cache.context(
            FetchMetadata.INVALID_SESSION_ID,
            FetchMetadata.INITIAL_EPOCH,
            List.of(ask(A, 5), ask(B, 5), ask(C, 5)),
            List.of(),
            follower,
            nowMs);
    assertThat(full.error()).isNull();
    assertThat(full.reads()).extracting(PartitionFetch::tp).containsExactly(A, B, C);
    FetchSessionCache.Answer answer =
        full.answer(answers(told(A, 5), told(B, 5), told(C, 5)), nowMs);
    assertThat(answer.partitions()).containsOnlyKeys(A, B, C);
    return answer.sessionId();
  }

  @Test
  void anIncrementalFetchReadsTheSessionAndIsAnsweredOnlyWhatIsNew() {
    FetchSessionCache cache = new FetchSessionCache(10, new PrometheusRegistry());
    int id = open(cache, false, 0);
    assertThat(id).isNotEqualTo(FetchMetadata.INVALID_SESSION_ID);

    // epoch 1 names nothing: all three are read, and only B, whose high watermark moved, answered
    FetchSessionCache.Context first = cache.context(id, 1, List.of(), List.of(), false, 1);
    assertThat(first.reads()).extracting(PartitionFetch::tp).containsExactly(A, B, C);
    FetchSessionCache.Answer answer = first.answer(answers(told(A, 5), told(B, 6), told(C, 5)), 1);
    assertThat(answer.error()).isEqualTo(Errors.NONE);
    assertThat(answer.sessionId()).isEqualTo(id);
    assertThat(answer.partitions()).containsOnlyKeys(B);

    // epoch 2 moves A's offset and forgets C; A returns records and moves behind B
    FetchSessionCache.Context second =
        cache.context(id, 2, List.of(ask(A, 6)), List.of(C), false, 2);
    assertThat(second.reads()).containsExactly(ask(A, 6), ask(B, 5));
    answer = second.answer(answers(withRecords(A, 6), told(B, 6)), 2);
    assertThat(answer.partitions()).containsOnlyKeys(A);
    FetchSessionCache.Context third = cache.context(id, 3, List.of(), List.of(), false, 3);
    assertThat(third.reads()).extracting(PartitionFetch::tp).containsExactly(B, A);

    // an error is always answered, and the partition again once the error is gone
    answer = third.answer(answers(failed(B, 6), told(A, 6)), 3);
    assertThat(answer.partitions()).containsOnlyKeys(B);
    answer = cache.context(id, 4, List.of(), List.of(), false, 4).answer(answers(told(B, 6)), 4);
    assertThat(answer.partitions()).containsOnlyKeys(B);
  }

  @Test
  void aWrongEpochOrAnUnknownSessionIsRefused() {
    FetchSessionCache cache = new FetchSessionCache(10, new PrometheusRegistry());
    int id = open(cache, false, 0);
    assertThat(cache.context(id, 2, List.of(), List.of(), false, 1).error())
        .isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH);
    assertThat(cache.context(id + 1, 1, List.of(), List.of(), false, 1).error())
        .isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);

    // two requests at the same epoch: the second is refused
    FetchSessionCache.Context first = cache.context(id, 1, List.of(), List.of(), false, 1);
    assertThat(first.error()).isNull();
    assertThat(cache.context(id, 1, List.of(), List.of(), false, 1).error())
        .isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH);
  }

  @Test
  void aFullFetchNamingTheSessionClosesIt() {
    FetchSessionCache cache = new FetchSessionCache(10, new PrometheusRegistry());
    int id = open(cache, false, 0);
    FetchSessionCache.Context closing =
        cache.context(id, FetchMetadata.FINAL_EPOCH, List.of(ask(A, 5)), List.of(), false, 1);
    assertThat(closing.answer(answers(told(A, 5)), 1).sessionId())
        .isEqualTo(FetchMetadata.INVALID_SESSION_ID);
    assertThat(cache.size()).isZero();
    assertThat(cache.context(id, 1, List.of(), List.of(), false, 1).error())
        .isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);

    // forgetting every partition ends the session too
    int again = open(cache, false, 2);
    FetchSessionCache.Context empty =
        cache.context(again, 1, List.of(), List.of(A, B, C), false, 3);
    assertThat(empty.reads()).isEmpty();
    assertThat(empty.answer(new LinkedHashMap<>(), 3).sessionId())
        .isEqualTo(FetchMetadata.INVALID_SESSION_ID);
    assertThat(cache.size()).isZero();
  }

  @Test
  void aFullCacheGivesASlotToAFollowerOrAfterTheEvictionTime() {
    PrometheusRegistry registry = new PrometheusRegistry();
    FetchSessionCache cache = new FetchSessionCache(1, registry);
    int consumer = open(cache, false, 0);
    // a second consumer's session of the same size is worth no more: none for it
    assertThat(open(cache, false, 1)).isEqualTo(FetchMetadata.INVALID_SESSION_ID);
    // a follower's is worth more
    int follower = open(cache, true, 2);
    assertThat(follower).isNotEqualTo(FetchMetadata.INVALID_SESSION_ID);
    assertThat(cache.context(consumer, 1, List.of(), List.of(), false, 3).error())
        .isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
    assertThat(open(cache, false, 4)).isEqualTo(FetchMetadata.INVALID_SESSION_ID);
    // unused past the eviction time, even a follower's gives way
    assertThat(open(cache, false, 3 + FetchSessionCache.EVICTION_MS + 1))
        .isNotEqualTo(FetchMetadata.INVALID_SESSION_ID);
    assertThat(cache.size()).isEqualTo(1);
    assertThat(value(registry, "tidelog_fetch_session_evictions")).isEqualTo(2);
    assertThat(value(registry, "tidelog_fetch_sessions")).isEqualTo(1);
    assertThat(value(registry, "tidelog_fetch_session_partitions")).isEqualTo(3);
  }

  private static double value(PrometheusRegistry registry, String name) {
    return registry.scrape().stream()
        .filter(m -> m.getMetadata().getName().equals(name))
        .flatMap(m -> m.getDataPoints().stream())
        .mapToDouble(
            p ->
                p instanceof CounterSnapshot.CounterDataPointSnapshot c
                    ? c.getValue()
                    : ((GaugeSnapshot.GaugeDataPointSnapshot) p).getValue())
        .sum();
  }

  @Test
  void sessionsHoldAtMostAThousandPartitionsPerSlotInAll() {
    FetchSessionCache cache = new FetchSessionCache(1, new PrometheusRegistry());
    int id = open(cache, false, 0);
    assertThat(cache.partitions()).isEqualTo(3);
    List<PartitionFetch> more = new ArrayList<>();
    for (int i = 0; i < FetchSessionCache.PARTITIONS_PER_SLOT - 2; i++) {
      more.add(ask(new TopicPartition("more", i), 0));
    }
    // growing past the bound ends the session: its fetcher starts again with a full fetch
    assertThat(cache.context(id, 1, more, List.of(), false, 1).error())
        .isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
    assertThat(cache.size()).isZero();
    assertThat(cache.partitions()).isZero();
    // and a full fetch past it gets no session
    LinkedHashMap<TopicPartition, PartitionData> answered = new LinkedHashMap<>();
    more.add(ask(A, 0));
    more.add(ask(B, 0));
    more.add(ask(C, 0));
    more.forEach(m -> answered.put(m.tp(), told(m.tp(), 0).getValue()));
    FetchSessionCache.Context full =
        cache.context(0, FetchMetadata.INITIAL_EPOCH, more, List.of(), true, 2);
    assertThat(full.answer(answered, 2).sessionId()).isEqualTo(FetchMetadata.INVALID_SESSION_ID);
    more.remove(more.size() - 1);
    answered.remove(C);
    full = cache.context(0, FetchMetadata.INITIAL_EPOCH, more, List.of(), true, 3);
    assertThat(full.answer(answered, 3).sessionId()).isNotEqualTo(FetchMetadata.INVALID_SESSION_ID);
    assertThat(cache.partitions()).isEqualTo(FetchSessionCache.PARTITIONS_PER_SLOT);
  }
}
