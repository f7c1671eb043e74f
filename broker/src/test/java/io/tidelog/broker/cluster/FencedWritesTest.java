package io.tidelog.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.tidelog.broker.EtcdServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Partition state changes are compare-and-swaps in etcd; a controller's are fenced too. */
class FencedWritesTest {
  private static final TopicPartition TP = new TopicPartition("t", 0);

  @TempDir Path dir;
  private EtcdServer etcd;
  private MetadataStore store;
  private BrokerRegistration registration;

  @BeforeEach
  void topicOnOneBroker() throws Exception {
    etcd = EtcdServer.start(dir);
    store = MetadataStore.connect(List.of(etcd.endpoint()), "fencing");
    registration =
        new BrokerRegistration(
            store,
            new BrokerInfo(
                0,
                List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092)),
                null,
                "first",
                false),
            10_000,
            lease -> {},
            () -> {},
            () -> {});
    registration.register();
    store.createTopic("t", 1, 1, Map.of());
  }

  @AfterEach
  void stop() throws Exception {
    registration.close();
    store.close();
    etcd.close();
  }

  @Test
  void aDeposedControllersWriteIsRefused() {
    long lease = MetadataStore.get(store.client().getLeaseClient().grant(60)).getID();
    LeaderKey elected =
        MetadataStore.get(
                store
                    .client()
                    .getElectionClient()
                    .campaign(
                        store.key(ClusterImage.CONTROLLER), lease, ByteSequence.from("0", UTF_8)))
            .getLeader();
    Cmp fence =
        new Cmp(elected.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(elected.getRevision()));

    // While elected, its write goes through
    PartitionState before = store.image().partition(TP).orElseThrow();
    PartitionState offline = before.withLeader(PartitionState.NO_LEADER, before.isr());
    assertThat(write(before, offline, fence)).isTrue();

    // Deposed (its lease revoked, so its election key is gone), the same write is refused
    MetadataStore.get(store.client().getLeaseClient().revoke(lease));
    PartitionState current = store.image().partition(TP).orElseThrow();
    assertThat(write(current, current.withLeader(0, List.of(0)), fence)).isFalse();
    assertThat(store.image().partition(TP).orElseThrow().leader())
        .isEqualTo(PartitionState.NO_LEADER);
  }

  @Test
  void anIsrChangeFromAStaleStateIsRefused() {
    PartitionState first = store.image().partition(TP).orElseThrow();
    PartitionState shrunk = store.alterIsr(TP, first, List.of()).orElseThrow();
    assertThat(shrunk.isr()).isEmpty();
    assertThat(shrunk.partitionEpoch()).isEqualTo(first.partitionEpoch() + 1);

    // A leader that has not seen that change proposes from the state before it
    assertThat(store.alterIsr(TP, first, List.of(0))).isEmpty();
    assertThat(store.image().partition(TP).orElseThrow().isr()).isEmpty();
  }

  private boolean write(PartitionState expected, PartitionState next, Cmp fence) {
    return store
        .writePartitions(
            List.of(new MetadataStore.PartitionChange(TP, expected, next)), List.of(fence))
        .contains(TP);
  }
}
