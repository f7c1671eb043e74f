package io.tidelog.operator.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BatcherTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final List<Set<String>> calls = new ArrayList<>();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  /** An Admin call that answers each name with its length, and fails "missing". */
  private Map<String, KafkaFuture<Integer>> lengths(Map<String, Void> names) {
    synchronized (calls) {
      calls.add(Set.copyOf(names.keySet()));
    }
    Map<String, KafkaFuture<Integer>> results = new HashMap<>();
    names
        .keySet()
        .forEach(
            name -> {
              KafkaFutureImpl<Integer> result = new KafkaFutureImpl<>();
              if (name.equals("missing")) {
                result.completeExceptionally(new UnknownTopicOrPartitionException(name));
              } else {
                result.complete(name.length());
              }
              results.put(name, result);
            });
    return results;
  }

  @Test
  void callsWithinTheLingerGoOutAsOneRequestAndEachGetsItsOwnAnswer() throws Exception {
    // Given a batcher lingering 50 ms, when three callers ask within it (one twice),
    Batcher<String, Void, Integer> batcher = new Batcher<>(scheduler, 50, 500, this::lengths);
    CompletableFuture<Integer> a = batcher.submit("a", null);
    CompletableFuture<Integer> bb = batcher.submit("bb", null);
    CompletableFuture<Integer> again = batcher.submit("bb", null);
    CompletableFuture<Integer> missing = batcher.submit("missing", null);

    // then one request carries the three names, and each caller gets its own result.
    assertThat(a.get(5, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(bb.get(5, TimeUnit.SECONDS)).isEqualTo(2);
    assertThat(again.get(5, TimeUnit.SECONDS)).isEqualTo(2);
    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> missing.get(5, TimeUnit.SECONDS));
    assertThat(failed.getCause()).isInstanceOf(UnknownTopicOrPartitionException.class);
    assertThat(calls).containsExactly(Set.of("a", "bb", "missing"));
  }

  @Test
  void aFullBatchGoesAtOnceAndNoRequestExceedsTheMaximum() throws Exception {
    // Given a batcher of at most 10 names that lingers a minute, when 25 callers ask,
    Batcher<String, Void, Integer> batcher = new Batcher<>(scheduler, 60_000, 10, this::lengths);
    List<CompletableFuture<Integer>> answers = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      answers.add(batcher.submit("topic-" + i, null));
    }

    // then the first 20 are answered without waiting out the linger, in requests of 10.
    for (int i = 0; i < 20; i++) {
      assertThat(answers.get(i).get(5, TimeUnit.SECONDS)).isEqualTo(("topic-" + i).length());
    }
    assertThat(calls).hasSize(2).allSatisfy(call -> assertThat(call).hasSize(10));
    assertThat(answers.get(20)).isNotDone();
  }
}
