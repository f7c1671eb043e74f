package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.EtcdServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many topics are recorded in few etcd transactions, each with its own outcome. */
class CreateTopicsTest {
  @TempDir Path dir;

  @Test
  void aThousandTopicsTakeSixteenTransactionsAndTheRefusedOnesFailAlone() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "batch");
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
      store.createTopic("taken", 1, 1, Map.of());
      // Given 1,000 new one-partition topics (two etcd operations each), a taken name, and a
      // replication factor that one broker cannot hold,
      List<MetadataStore.NewTopic> topics = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        topics.add(new MetadataStore.NewTopic("t" + i, 1, 1, Map.of()));
      }
      topics.add(new MetadataStore.NewTopic("taken", 1, 1, Map.of()));
      topics.add(new MetadataStore.NewTopic("too-wide", 1, 3, Map.of()));
      long before = store.image().revision();

      // when they are created in one call,
      Map<String, CompletableFuture<TopicMetadata>> outcomes = store.createTopics(topics);

      // then the 1,000 exist after 16 transactions (at most 128 operations each, one revision
      // each, sent eight at a time), and the other two fail with their own errors.
      for (int i = 0; i < 1000; i++) {
        assertThat(outcomes.get("t" + i).join().name()).isEqualTo("t" + i);
        assertThat(store.image().topics()).containsKey("t" + i);
      }
      assertThat(store.image().revision() - before).isEqualTo(16);
      assertThat(outcomes.get("taken"))
          .failsWithin(Duration.ZERO)
          .withThrowableOfType(ExecutionException.class)
          .withCauseInstanceOf(TopicExistsException.class);
      assertThat(outcomes.get("too-wide"))
          .failsWithin(Duration.ZERO)
          .withThrowableOfType(ExecutionException.class)
          .withCauseInstanceOf(InvalidReplicationFactorException.class);
    }
  }
}
