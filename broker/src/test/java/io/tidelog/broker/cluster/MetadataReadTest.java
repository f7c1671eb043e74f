package io.tidelog.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.tidelog.broker.EtcdServer;
import io.tidelog.broker.config.EtcdSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker reads the cluster's metadata whatever its size and content: in pages, so that an image
 * past gRPC's 4 MiB limit on one answer still loads (it could not restart before), and past
 * malformed values, which are skipped with their key named instead of stopping the broker.
 */
class MetadataReadTest {
  @TempDir Path dir;

  private static void put(MetadataStore store, String relative, String value) {
    MetadataStore.get(
        store.client().getKVClient().put(store.key(relative), ByteSequence.from(value, UTF_8)));
  }

  @Test
  void anImageOfSixMebibytesLoadsInPages() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore writer = MetadataStore.connect(List.of(etcd.endpoint()), "big")) {
      // 600 topics whose configs carry 10 KiB each: about 6 MiB under the prefix
      String padding = "x".repeat(10 * 1024);
      List<CompletableFuture<?>> puts = new ArrayList<>();
      for (int t = 0; t < 600; t++) {
        TopicMetadata topic =
            new TopicMetadata(
                "topic-" + t,
                Uuid.randomUuid(),
                List.of(List.of(0)),
                Map.of("padding", padding),
                0);
        puts.add(
            writer
                .client()
                .getKVClient()
                .put(
                    writer.key(MetadataStore.topicKey(topic.name())),
                    ByteSequence.from(topic.toJson().encode(), UTF_8)));
      }
      CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).get();

      try (MetadataStore reader = MetadataStore.connect(List.of(etcd.endpoint()), "big")) {
        assertThat(reader.image().topics()).hasSize(600);
        assertThat(reader.image().topics().get("topic-599").configs())
            .containsEntry("padding", padding);
      }
      // Pages from 7 keys: many pages, one snapshot
      try (MetadataStore reader =
          MetadataStore.connect(EtcdSettings.plain(List.of(etcd.endpoint())), "big", 7)) {
        assertThat(reader.image().topics()).hasSize(600);
        assertThat(reader.image().revision()).isEqualTo(writer.image().revision());
      }
    }
  }

  @Test
  void malformedValuesAreSkippedAtStartAndInTheWatch() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore writer = MetadataStore.connect(List.of(etcd.endpoint()), "bad")) {
      TopicPartition good = new TopicPartition("good", 0);
      TopicPartition broken = new TopicPartition("good", 1);
      put(
          writer,
          MetadataStore.topicKey("good"),
          new TopicMetadata("good", Uuid.randomUuid(), List.of(List.of(0), List.of(0)), Map.of(), 0)
              .toJson()
              .encode());
      PartitionState state = new PartitionState(0, 0, List.of(0), 0, 0);
      put(writer, MetadataStore.partitionKey(good), state.toJson().encode());
      put(writer, MetadataStore.partitionKey(broken), "{not json");
      put(writer, MetadataStore.topicKey("garbage"), "[1, 2");
      put(writer, "partitions/good/not-a-number", "{}");

      // At start: the broker reads everything else; the broken partition has no state (offline)
      try (MetadataStore reader = MetadataStore.connect(List.of(etcd.endpoint()), "bad")) {
        assertThat(reader.image().topics()).containsOnlyKeys("good");
        assertThat(reader.image().partitions()).containsOnlyKeys(good);

        // In the watch: a bad value drops a partition's state, a good one brings it back
        put(writer, MetadataStore.partitionKey(good), "{\"leader\": \"nobody\"}");
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(reader.image().partitions()).isEmpty());
        put(writer, MetadataStore.partitionKey(broken), state.toJson().encode());
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(reader.image().partitions()).containsOnlyKeys(broken));

        // and a bad topic value keeps the topic as it was: a bad write never looks like a deletion
        TopicMetadata before = reader.image().topics().get("good");
        put(writer, MetadataStore.topicKey("good"), "{\"assignment\": 7}");
        put(
            writer,
            MetadataStore.topicKey("later"),
            new TopicMetadata("later", Uuid.randomUuid(), List.of(List.of(0)), Map.of(), 0)
                .toJson()
                .encode());
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(reader.image().topics()).containsKey("later"));
        assertThat(reader.image().topics().get("good")).isEqualTo(before);
      }
    }
  }
}
