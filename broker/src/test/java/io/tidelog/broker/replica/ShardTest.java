package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ShardTest {
  /** Keeps the shard's thread busy until the returned latch is counted down. */
  private static CountDownLatch occupy(Shard shard) {
    CountDownLatch hold = new CountDownLatch(1);
    shard.execute(
        () -> {
          try {
            hold.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    return hold;
  }

  @Test
  void theBrokersOwnWorkRunsBeforeQueuedClientWork() throws Exception {
    Shard shard = new Shard("shard-test");
    CountDownLatch hold = occupy(shard);
    List<String> ran = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 3; i++) {
      int n = i;
      shard.client().execute(() -> ran.add("client " + n));
    }
    shard.execute(() -> ran.add("broker"));
    hold.countDown();
    CompletableFuture.runAsync(() -> {}, shard.client()).get(10, TimeUnit.SECONDS);

    assertThat(ran).containsExactly("broker", "client 0", "client 1", "client 2");
    shard.shutdown();
    assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aTaskThatThrowsAnErrorDoesNotStopTheShard() throws Exception {
    Shard shard = new Shard("shard-test");
    shard.execute(
        () -> {
          throw new StackOverflowError("deep");
        });
    assertThat(
            CompletableFuture.supplyAsync(() -> "still serving", shard).get(10, TimeUnit.SECONDS))
        .isEqualTo("still serving");
    shard.shutdown();
    assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void shutDownItRunsWhatWasQueuedAndRefusesMore() throws Exception {
    Shard shard = new Shard("shard-test");
    CountDownLatch hold = occupy(shard);
    List<Integer> ran = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 100; i++) {
      int n = i;
      shard.client().execute(() -> ran.add(n));
    }
    shard.shutdown();
    assertThatThrownBy(() -> shard.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class);
    hold.countDown();
    assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).hasSize(100);
  }
}
