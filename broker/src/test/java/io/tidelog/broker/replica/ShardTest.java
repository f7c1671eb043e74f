package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
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

  /** Calls {@code call} on an event loop of a Vert.x of its own, and waits for its answer. */
  private static <T> T onEventLoop(Supplier<T> call) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      CompletableFuture<T> answer = new CompletableFuture<>();
      vertx.runOnContext(v -> answer.complete(call.get()));
      return answer.get(10, TimeUnit.SECONDS);
    } finally {
      vertx.close().await();
    }
  }

  @Test
  void anIdleShardRunsAnEventLoopsWorkInPlace() throws Exception {
    Shard shard = new Shard("shard-test");
    List<String> ran = new CopyOnWriteArrayList<>();

    boolean inPlace =
        onEventLoop(
            () ->
                shard.runInPlace(
                    () -> ran.add(Thread.currentThread().getName() + " " + shard.isInPlace())));

    assertThat(inPlace).isTrue();
    assertThat(ran)
        .singleElement()
        .asString()
        .startsWith("vert.x-eventloop-thread")
        .endsWith("true");
    assertThat(shard.isInPlace()).isFalse();
    shard.shutdown();
    assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aBusyShardOrAThreadThatIsNoEventLoopRunsNothingInPlace() throws Exception {
    Shard shard = new Shard("shard-test");
    AtomicBoolean ran = new AtomicBoolean();

    assertThat(shard.runInPlace(() -> ran.set(true))).isFalse(); // the test's thread
    CountDownLatch hold = occupy(shard);
    assertThat(onEventLoop(() -> shard.runInPlace(() -> ran.set(true)))).isFalse();
    hold.countDown();

    assertThat(ran).isFalse();
    shard.shutdown();
    assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void whatWorkInPlaceQueuesRunsOnTheShardsThreadAfterIt() throws Exception {
    Shard shard = new Shard("shard-test");
    List<String> ran = new CopyOnWriteArrayList<>();
    CompletableFuture<String> queued = new CompletableFuture<>();

    onEventLoop(
        () ->
            shard.runInPlace(
                () -> {
                  shard.execute(() -> queued.complete(Thread.currentThread().getName()));
                  ran.add("in place, done: " + queued.isDone());
                }));

    assertThat(queued.get(10, TimeUnit.SECONDS)).isEqualTo("shard-test");
    assertThat(ran).containsExactly("in place, done: false");
    shard.shutdown();
    assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void itsContextRunsOnTheShardsThreadAndQueuesWorkThereWithoutAnotherThread() throws Exception {
    Shard shard = new Shard("shard-test");
    Vertx vertx = Vertx.vertx();
    try {
      CompletableFuture<List<String>> threads = new CompletableFuture<>();
      shard
          .context(vertx)
          .runOnContext(
              v -> {
                String handler = Thread.currentThread().getName();
                CompletableFuture.supplyAsync(() -> Thread.currentThread().getName(), shard)
                    .thenAccept(task -> threads.complete(List.of(handler, task)));
              });

      assertThat(threads.get(10, TimeUnit.SECONDS)).containsExactly("shard-test", "shard-test");
      assertThat(shard.context(vertx)).isSameAs(shard.context(vertx));
    } finally {
      vertx.close().await();
      shard.shutdown();
      assertThat(shard.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
