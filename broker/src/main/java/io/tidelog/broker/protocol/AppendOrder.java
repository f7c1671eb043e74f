package io.tidelog.broker.protocol;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The order in which a transactional id's produce requests append: the order they came in, whatever
 * order their checks with the coordinator end in. A request whose check waits (an add asked again
 * after CONCURRENT_TRANSACTIONS, say) holds back the producer's later requests, as Kafka's one
 * request at a time per connection does; without it a later batch of the same producer would append
 * first and be refused OUT_OF_ORDER_SEQUENCE. An id leaves the map when its last request has handed
 * its batches to the partitions, so the map holds no more than the requests in flight.
 *
 * <p>Thread-safe.
 */
final class AppendOrder {
  /** One request's place in its id's line. */
  static final class Turn {
    /** The turn of a request that waits for no other. */
    static final Turn NOW = new Turn(CompletableFuture.completedFuture(null), () -> {});

    private final CompletableFuture<Void> previous;
    private final Runnable onLeave;

    private Turn(CompletableFuture<Void> previous, Runnable onLeave) {
      this.previous = previous;
      this.onLeave = onLeave;
    }

    /** Done once the request before has handed its batches over: this one may append. */
    CompletableFuture<Void> previous() {
      return previous;
    }

    /** This request has handed its batches over (or failed its checks): the next may append. */
    void leave() {
      onLeave.run();
    }
  }

  private final ConcurrentHashMap<String, CompletableFuture<Void>> last = new ConcurrentHashMap<>();

  /** Takes the next turn of {@code transactionalId}, in the order requests call it. */
  Turn enter(String transactionalId) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> previous = last.put(transactionalId, mine);
    return new Turn(
        previous == null ? CompletableFuture.completedFuture(null) : previous,
        () -> {
          mine.complete(null);
          last.remove(transactionalId, mine);
        });
  }
}
