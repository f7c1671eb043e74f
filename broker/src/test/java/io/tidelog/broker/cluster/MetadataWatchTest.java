package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.EtcdServer;
import io.tidelog.broker.TcpProxy;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A broker's metadata image follows etcd, and recovers when its watch loses history. */
class MetadataWatchTest {
  @TempDir Path dir;

  @Test
  void aWatchCutOffWhileEtcdCompactedWhatItMissedReadsEverythingAgain() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        TcpProxy proxy = TcpProxy.start(URI.create(etcd.endpoint()).getPort());
        MetadataStore writer = MetadataStore.connect(List.of(etcd.endpoint()), "watch");
        MetadataStore watcher =
            MetadataStore.connect(List.of("http://127.0.0.1:" + proxy.port()), "watch");
        BrokerRegistration registration =
            new BrokerRegistration(
                writer,
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
      writer.createTopic("before", 1, 1, Map.of());
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> watcher.image().topics().containsKey("before"));

      // Cut off from etcd, the watcher misses a creation and a deletion, and etcd compacts them
      proxy.cut();
      writer.createTopic("during", 1, 1, Map.of());
      writer.deleteTopic("before");
      MetadataStore.get(writer.client().getKVClient().compact(writer.image().revision()));
      assertThat(watcher.image().topics()).containsOnlyKeys("before");

      // Back in touch, it cannot resume its watch there, reads everything again and watches anew
      proxy.restore();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(watcher.image().topics()).containsOnlyKeys("during"));
      writer.createTopic("after", 1, 1, Map.of());
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> assertThat(watcher.image().topics()).containsOnlyKeys("during", "after"));
    }
  }

  @Test
  void eachImageComesWithWhatItsWatchEventChangedAndSharesTheRest() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "delta");
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
      store.createTopic("a", 3, 1, Map.of());
      store.createTopic("b", 2, 1, Map.of());
      List<MetadataDelta> deltas = new CopyOnWriteArrayList<>();
      store.addListener((image, delta) -> deltas.add(delta));
      ClusterImage before = store.image();
      TopicPartition a1 = new TopicPartition("a", 1);

      store.alterIsr(a1, before.partition(a1).orElseThrow(), List.of());

      assertThat(deltas).hasSize(1);
      MetadataDelta delta = deltas.get(0);
      assertThat(delta.everything() || delta.brokers() || delta.candidates()).isFalse();
      assertThat(delta.partitions()).containsExactly(a1);
      assertThat(delta.topics()).isEmpty();
      assertThat(delta.touches(new TopicPartition("a", 0))).isFalse();
      ClusterImage after = store.image();
      assertThat(after.partitions().get(a1).isr()).isEmpty();
      assertThat(after.topics().get("b")).isSameAs(before.topics().get("b"));

      store.createTopic("c", 2, 1, Map.of());

      assertThat(deltas).hasSize(2);
      assertThat(deltas.get(1).topics()).containsExactly("c");
      assertThat(deltas.get(1).partitions())
          .containsExactlyInAnyOrder(new TopicPartition("c", 0), new TopicPartition("c", 1));
    }
  }
}
