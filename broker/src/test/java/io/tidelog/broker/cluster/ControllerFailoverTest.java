package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.EtcdServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller against a real etcd, with registrations standing for brokers: what it writes when
 * a broker goes, and in how many etcd transactions.
 */
class ControllerFailoverTest {
  private static final int TOPICS = 100;
  private static final int PARTITIONS = 10;

  @TempDir Path dir;
  private EtcdServer etcd;
  private MetadataStore store;
  private final List<BrokerRegistration> registrations = new ArrayList<>();
  private Controller controller;

  @BeforeEach
  void twoBrokersAndAThousandPartitions() throws Exception {
    etcd = EtcdServer.start(dir);
    store = MetadataStore.connect(List.of(etcd.endpoint()), "failover");
    for (int id = 0; id < 2; id++) {
      BrokerRegistration registration =
          new BrokerRegistration(
              store,
              new BrokerInfo(
                  id,
                  List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092 + id)),
                  null,
                  "instance-" + id,
                  false),
              10_000,
              lease -> {},
              () -> {},
              () -> {});
      registration.register();
      registrations.add(registration);
    }
    store.createTopics(
        IntStream.range(0, TOPICS)
            .mapToObj(t -> new MetadataStore.NewTopic("t" + t, PARTITIONS, 2, Map.of()))
            .toList());
    controller =
        new Controller(
            store, 0, new io.tidelog.broker.config.EffectiveTopicConfigs(Map::of), false, 300_000);
    long lease = MetadataStore.get(store.client().getLeaseClient().grant(60)).getID();
    controller.campaign(lease);
    await().atMost(Duration.ofSeconds(30)).until(controller::isActive);
  }

  @AfterEach
  void stop() throws Exception {
    controller.close();
    for (BrokerRegistration registration : registrations) {
      registration.close();
    }
    store.close();
    etcd.close();
  }

  @Test
  void aBrokerThatGoesLosesEveryLeadershipAndIsrPlaceInAFewTransactions() {
    List<TopicPartition> ledByOne =
        store.image().partitions().entrySet().stream()
            .filter(e -> e.getValue().leader() == 1)
            .map(Map.Entry::getKey)
            .toList();
    assertThat(ledByOne).hasSizeBetween(TOPICS * PARTITIONS / 4, TOPICS * PARTITIONS * 3 / 4);
    long before = store.image().revision();

    registrations.get(1).close(); // its lease revoked: broker 1 is gone

    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                store.image().partitions().values().stream()
                    .allMatch(p -> p.leader() == 0 && p.isr().equals(List.of(0))));
    // Every partition changed (1,000 states: a new leader for those broker 1 led, a smaller ISR
    // for the rest), in transactions of 127: 8 revisions, plus the registration's deletion
    long revisions = store.image().revision() - before;
    assertThat(revisions).isLessThanOrEqualTo(TOPICS * PARTITIONS / 127 + 1 + 2);
    for (TopicPartition tp : ledByOne) {
      PartitionState state = store.image().partition(tp).orElseThrow();
      assertThat(state.leaderEpoch()).isEqualTo(1);
    }
  }

  @Test
  void aBatchWithOneConcurrentlyChangedPartitionWritesAllTheOthers() {
    List<MetadataStore.PartitionChange> changes = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      TopicPartition tp = new TopicPartition("t0", p);
      PartitionState state = store.image().partition(tp).orElseThrow();
      changes.add(new MetadataStore.PartitionChange(tp, state, state.withIsr(List.of())));
    }
    TopicPartition raced = changes.get(3).tp();
    PartitionState racedState = changes.get(3).expected();
    store.alterIsr(raced, racedState, List.of(racedState.leader()));

    Map<TopicPartition, PartitionState> written = store.alterIsrs(changes);

    assertThat(written).hasSize(PARTITIONS - 1).doesNotContainKey(raced);
    for (MetadataStore.PartitionChange change : changes) {
      List<Integer> isr = store.image().partition(change.tp()).orElseThrow().isr();
      assertThat(isr)
          .isEqualTo(change.tp().equals(raced) ? List.of(racedState.leader()) : List.of());
    }
  }
}
