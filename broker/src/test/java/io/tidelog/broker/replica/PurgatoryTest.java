package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.util.HashedWheelTimer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The registry where requests wait: one completion each, and nothing left behind. */
class PurgatoryTest {
  private final HashedWheelTimer timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
  private final Purgatory purgatory = new Purgatory(timer);

  @AfterEach
  void stopTimer() {
    timer.stop();
  }

  /** Completes when {@code ready} holds for the key it is checked on; records how it ended. */
  private static final class Waiting extends DelayedOperation {
    final List<String> endings = new CopyOnWriteArrayList<>();
    final Predicate<TopicPartition> ready;

    Waiting(Predicate<TopicPartition> ready) {
      this.ready = ready;
    }

    @Override
    void tryComplete(TopicPartition key) {
      if (ready.test(key)) {
        forceComplete();
      }
    }

    @Override
    void onComplete(boolean expired) {
      endings.add(expired ? "expired" : "completed");
    }
  }

  private static List<TopicPartition> partitions(int count) {
    return IntStream.range(0, count).mapToObj(p -> new TopicPartition("t", p)).toList();
  }

  @Test
  void aCheckOnAnyOfItsPartitionsCompletesAnOperationWhichThenLeavesEveryWatchList() {
    TopicPartition last = new TopicPartition("t", 99_999);
    Waiting op = new Waiting(last::equals);
    purgatory.watch(op, partitions(100_000), 60_000);
    assertThat(purgatory.watchedKeys()).isEqualTo(100_000);

    purgatory.checkAndComplete(new TopicPartition("t", 0));
    assertThat(op.endings).isEmpty();
    purgatory.checkAndComplete(last);

    assertThat(op.endings).containsExactly("completed");
    assertThat(purgatory.size()).isZero();
    assertThat(purgatory.watchedKeys()).isZero();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(timer.pendingTimeouts())
                    .as("its expiry was cancelled and removed")
                    .isZero());
  }

  @Test
  void anOperationNobodyCompletesExpiresOnceAndLeavesNothingBehind() {
    Waiting op = new Waiting(key -> false);
    purgatory.watch(op, partitions(3), 50);

    await().atMost(Duration.ofSeconds(10)).until(() -> !op.endings.isEmpty());
    purgatory.checkAndComplete(new TopicPartition("t", 1));

    assertThat(op.endings).containsExactly("expired");
    assertThat(purgatory.size()).isZero();
    assertThat(purgatory.watchedKeys()).isZero();
  }

  @Test
  void checksRacingItsExpiryCompleteAnOperationExactlyOnce() throws Exception {
    List<Waiting> ops = new CopyOnWriteArrayList<>();
    List<TopicPartition> keys = partitions(4);
    for (int i = 0; i < 2_000; i++) {
      Waiting op = new Waiting(key -> true);
      ops.add(op);
      purgatory.watch(op, keys, i % 3); // 0 to 2 ms: expiries race the checks
    }
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> checkers =
        keys.stream()
            .map(
                key ->
                    new Thread(
                        () -> {
                          try {
                            start.await();
                          } catch (InterruptedException e) {
                            return;
                          }
                          purgatory.checkAndComplete(key);
                        }))
            .toList();
    checkers.forEach(Thread::start);
    start.countDown();
    for (Thread checker : checkers) {
      checker.join(TimeUnit.SECONDS.toMillis(30));
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> purgatory.size() == 0);
    assertThat(ops).allSatisfy(op -> assertThat(op.endings).hasSize(1));
    assertThat(purgatory.watchedKeys()).isZero();
  }

  @Test
  void anOperationCompletedWhileBeingWatchedLeavesNoWatchBehind() throws Exception {
    // Checked, and completed, by another thread while watch() still adds its keys
    List<TopicPartition> keys = partitions(50_000);
    Waiting op = new Waiting(key -> true);
    Thread checker =
        new Thread(
            () -> {
              for (int i = 0; i < 1_000 && !op.isCompleted(); i++) {
                purgatory.checkAndComplete(keys.get(0));
                Thread.onSpinWait();
              }
            });
    checker.start();
    purgatory.watch(op, keys, 60_000);
    purgatory.checkAndComplete(keys.get(0)); // completes it, if the other thread has not
    checker.join(TimeUnit.SECONDS.toMillis(30));

    assertThat(op.endings).containsExactly("completed");
    assertThat(purgatory.size()).isZero();
    assertThat(purgatory.watchedKeys()).isZero();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(timer.pendingTimeouts()).isZero());
  }
}
