package io.tidelog.broker.replica;

import io.netty.util.Timeout;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.common.TopicPartition;

/**
 * A request that waits in a {@link Purgatory} for something to happen on its partitions, as Kafka's
 * {@code DelayedOperation}: it completes exactly once, either when a check after a change on one of
 * its partitions finds that it can ({@link #tryComplete}), or when its time is up.
 */
abstract class DelayedOperation {
  private final AtomicBoolean completed = new AtomicBoolean();
  private volatile Timeout expiry;
  private volatile Runnable unwatch = () -> {};

  /**
   * Called on {@code key}'s shard after something changed there (an append, a high-watermark move,
   * a new role): completes this operation with {@link #forceComplete} if it now can.
   */
  abstract void tryComplete(TopicPartition key);

  /** Runs once, when the operation completes: {@code expired} when its time was up first. */
  abstract void onComplete(boolean expired);

  /** Completes the operation unless it already completed; returns whether this call did. */
  final boolean forceComplete() {
    return complete(false);
  }

  /** Completes the operation as expired unless it already completed. */
  final void expire() {
    complete(true);
  }

  private boolean complete(boolean expired) {
    if (!completed.compareAndSet(false, true)) {
      return false;
    }
    stopWaiting();
    onComplete(expired);
    return true;
  }

  final boolean isCompleted() {
    return completed.get();
  }

  /** Set by the purgatory once it watches the operation. */
  final void watching(Timeout timer, Runnable stopWatching) {
    this.unwatch = stopWatching;
    this.expiry = timer;
  }

  /** Cancels the timer and leaves the watch lists; harmless to repeat. */
  final void stopWaiting() {
    Timeout timer = expiry;
    if (timer != null) {
      timer.cancel();
    }
    unwatch.run();
  }
}
