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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A controller's writes compare its election key: once deposed, it cannot write. */
class ControllerFencingTest {
  @TempDir Path dir;

  @Test
  void aDeposedControllersWriteIsRefused() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "fencing");
        BrokerRegistration registration =
            new BrokerRegistration(
                store,
                new BrokerInfo(0, "127.0.0.1", 9092, null, "first", false),
                10_000,
                lease -> {},
                () -> {})) {
      registration.register();
      store.createTopic("t", 1, 1, Map.of());
      TopicPartition tp = new TopicPartition("t", 0);
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
      PartitionState before = store.image().partition(tp).orElseThrow();
      PartitionState offline = before.withLeader(PartitionState.NO_LEADER, before.isr());
      assertThat(store.writePartition(tp, before, offline, fence)).isPresent();

      // Deposed (its lease revoked, so its election key is gone), the same write is refused
      MetadataStore.get(store.client().getLeaseClient().revoke(lease));
      PartitionState current = store.image().partition(tp).orElseThrow();
      assertThat(store.writePartition(tp, current, current.withLeader(0, List.of(0)), fence))
          .isEmpty();
      assertThat(store.image().partition(tp).orElseThrow().leader())
          .isEqualTo(PartitionState.NO_LEADER);
    }
  }
}
