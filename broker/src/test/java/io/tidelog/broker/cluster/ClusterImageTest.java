package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.pcollections.HashTreePMap;

/** What a controlled shutdown waits for: leaderships another in-sync replica could take. */
class ClusterImageTest {
  private static BrokerInfo broker(int id, boolean shuttingDown) {
    return new BrokerInfo(
        id,
        List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092 + id)),
        null,
        "i" + id,
        shuttingDown);
  }

  private static ClusterImage image(
      Map<Integer, BrokerInfo> brokers, Map<TopicPartition, PartitionState> partitions) {
    return new ClusterImage(
        1,
        HashTreePMap.from(brokers),
        HashTreePMap.empty(),
        HashTreePMap.from(partitions),
        HashTreePMap.empty(),
        HashTreePMap.empty(),
        HashTreePMap.empty(),
        HashTreePMap.empty(),
        HashTreePMap.empty());
  }

  @Test
  void aLeaderOfPartitionsWithAnotherActiveIsrMemberHasSomethingToHandOver() {
    TopicPartition shared = new TopicPartition("t", 0);
    ClusterImage image =
        image(
            Map.of(0, broker(0, true), 1, broker(1, false)),
            Map.of(shared, new PartitionState(0, 3, List.of(0, 1), 3, 10)));

    assertThat(image.leadsPartitionsToHandOver(0)).isTrue();
    assertThat(image.leadsPartitionsToHandOver(1)).isFalse();
  }

  @Test
  void partitionsOnlyItCanLeadAreNotWaitedFor() {
    ClusterImage image =
        image(
            Map.of(0, broker(0, true), 1, broker(1, true), 2, broker(2, false)),
            Map.of(
                // replication factor 1
                new TopicPartition("single", 0), new PartitionState(0, 1, List.of(0), 1, 10),
                // the other ISR member shuts down too
                new TopicPartition("both-leaving", 0),
                    new PartitionState(0, 1, List.of(0, 1), 1, 11),
                // broker 2 is not in the ISR
                new TopicPartition("lagging", 0), new PartitionState(0, 1, List.of(0), 1, 12)));

    assertThat(image.leadsPartitionsToHandOver(0)).isFalse();
  }
}
