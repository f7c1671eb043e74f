package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.EtcdServer;
import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.BrokerRegistration;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.MetadataStore.PartitionChange;
import io.tidelog.broker.cluster.PartitionState;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ISR changes proposed while a write is queued go to etcd together, each with its own answer. */
class IsrChangeSenderTest {
  @TempDir Path dir;

  /** An executor that runs its tasks when told. */
  private static final class Manual implements Executor {
    final Queue<Runnable> tasks = new ArrayDeque<>();

    @Override
    public void execute(Runnable task) {
      tasks.add(task);
    }

    void runAll() {
      for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
        task.run();
      }
    }
  }

  @Test
  void fiveHundredChangesTakeFourTransactionsAndARacedOneIsRefusedAlone() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "isr");
        BrokerRegistration registration =
            new BrokerRegistration(
                store,
                new BrokerInfo(
                    0,
                    List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092)),
                    null,
                    "only",
                    false),
                60_000,
                lease -> {},
                () -> {},
                () -> {})) {
      registration.register();
      List<MetadataStore.NewTopic> topics = new ArrayList<>();
      for (int t = 0; t < 50; t++) {
        topics.add(new MetadataStore.NewTopic("t" + t, 10, 1, Map.of()));
      }
      store.createTopics(topics);
      Manual executor = new Manual();
      IsrChangeSender sender = new IsrChangeSender(store, executor);

      // 500 leaders each propose an ISR change before the executor runs
      List<TopicPartition> partitions = new ArrayList<>();
      List<CompletableFuture<Optional<PartitionState>>> answers = new ArrayList<>();
      for (int t = 0; t < 50; t++) {
        for (int p = 0; p < 10; p++) {
          TopicPartition tp = new TopicPartition("t" + t, p);
          PartitionState state = store.image().partition(tp).orElseThrow();
          partitions.add(tp);
          answers.add(sender.send(new PartitionChange(tp, state, state.withIsr(List.of()))));
        }
      }
      // and one partition's state changes under its proposal
      TopicPartition raced = partitions.get(7);
      PartitionState racedState = store.image().partition(raced).orElseThrow();
      store.alterIsr(raced, racedState, racedState.isr());
      long before = store.image().revision();

      assertThat(executor.tasks).hasSize(1);
      executor.runAll();

      // 499 written in ceil(500 / 128) = 4 transactions (one each, before: 500; the raced one's
      // is sent again without it), the raced one refused, its state left as the race wrote it
      assertThat(store.image().revision() - before).isEqualTo(4);
      for (int i = 0; i < partitions.size(); i++) {
        Optional<PartitionState> answer = answers.get(i).join();
        if (partitions.get(i).equals(raced)) {
          assertThat(answer).isEmpty();
          assertThat(store.image().partition(raced).orElseThrow().isr())
              .isEqualTo(racedState.isr());
        } else {
          assertThat(answer.orElseThrow().isr()).isEmpty();
        }
      }
      assertThat(executor.tasks).isEmpty();
    }
  }
}
