package io.tidelog.operator.topic;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.KafkaFuture;

/**
 * Coalesces calls of one Admin method: the keys submitted within {@code lingerMs} of the first go
 * out as one request of at most {@code maxBatch} keys. Thread-safe; the request is sent from the
 * scheduler's thread, and each caller's future completes with its own key's result.
 *
 * @param <K> what one caller asks about (a topic name, a config resource)
 * @param <A> what it passes along with the key (a NewTopic, config changes)
 * @param <V> what it gets back
 */
final class Batcher<K, A, V> {
  private final ScheduledExecutorService scheduler;
  private final long lingerMs;
  private final int maxBatch;
  private final Function<Map<K, A>, Map<K, KafkaFuture<V>>> call;
  private Map<K, Pending<A, V>> pending = new LinkedHashMap<>();

  private record Pending<A, V>(A argument, List<CompletableFuture<V>> waiters) {}

  Batcher(
      ScheduledExecutorService scheduler,
      long lingerMs,
      int maxBatch,
      Function<Map<K, A>, Map<K, KafkaFuture<V>>> call) {
    this.scheduler = scheduler;
    this.lingerMs = lingerMs;
    this.maxBatch = maxBatch;
    this.call = call;
  }

  /**
   * Queues {@code key}; callers asking about the same key in one batch share the request (the first
   * caller's argument is sent).
   */
  synchronized CompletableFuture<V> submit(K key, A argument) {
    CompletableFuture<V> result = new CompletableFuture<>();
    if (pending.isEmpty()) {
      scheduler.schedule(this::flush, lingerMs, TimeUnit.MILLISECONDS);
    }
    pending
        .computeIfAbsent(key, k -> new Pending<>(argument, new ArrayList<>()))
        .waiters
        .add(result);
    if (pending.size() >= maxBatch) {
      Map<K, Pending<A, V>> full = pending;
      pending = new LinkedHashMap<>();
      scheduler.execute(() -> send(full));
    }
    return result;
  }

  /** Sends what is pending once the linger has passed (what a full batch left, if anything). */
  private void flush() {
    Map<K, Pending<A, V>> batch;
    synchronized (this) {
      if (pending.isEmpty()) {
        return;
      }
      batch = pending;
      pending = new LinkedHashMap<>();
    }
    send(batch);
  }

  private void send(Map<K, Pending<A, V>> batch) {
    Map<K, A> arguments = new HashMap<>();
    batch.forEach((key, p) -> arguments.put(key, p.argument));
    Map<K, KafkaFuture<V>> results;
    try {
      results = call.apply(arguments);
    } catch (RuntimeException e) {
      batch.values().forEach(p -> p.waiters.forEach(w -> w.completeExceptionally(e)));
      return;
    }
    batch.forEach(
        (key, p) -> {
          KafkaFuture<V> result = results.get(key);
          if (result == null) {
            IllegalStateException missing =
                new IllegalStateException("the Admin call returned no result for " + key);
            p.waiters.forEach(w -> w.completeExceptionally(missing));
            return;
          }
          result.whenComplete(
              (value, error) ->
                  p.waiters.forEach(
                      w -> {
                        if (error != null) {
                          w.completeExceptionally(error);
                        } else {
                          w.complete(value);
                        }
                      }));
        });
  }
}
