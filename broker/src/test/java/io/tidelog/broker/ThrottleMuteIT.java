package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KIP-219 on the broker's side: a client that ignores the throttle time it is given is not read
 * from until that time has passed, so the quota holds even against a client that does not
 * cooperate.
 */
class ThrottleMuteIT {
  @TempDir Path dir;

  @Test
  void aClientThatIgnoresItsThrottleIsNotReadUntilTheThrottleEnds() throws Exception {
    try (TestBroker broker = TestBroker.start(dir, Map.of());
        Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic("muted", 1, (short) 1))).all().get();
      admin
          .alterClientQuotas(
              List.of(
                  new ClientQuotaAlteration(
                      new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "raw-test")),
                      List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 20_000.0)))))
          .all()
          .get();
      TopicPartition tp = new TopicPartition("muted", 0);
      try (RawKafkaClient raw = new RawKafkaClient(broker.port, 60_000)) {
        // 300 KB over a young rate's span of 10 s is 1.5 times 20 KB/s: 5 s of throttle
        ProduceResponse first = (ProduceResponse) raw.send(produce(tp, 300_000));
        assertThat(first.throttleTimeMs()).isGreaterThan(1_000);
        long sentNanos = System.nanoTime();
        ProduceResponse second = (ProduceResponse) raw.send(produce(tp, 100));
        long waitedMs = (System.nanoTime() - sentNanos) / 1_000_000;
        assertThat(waitedMs).isGreaterThanOrEqualTo(first.throttleTimeMs() * 9L / 10);
        assertThat(second.throttleTimeMs()).isPositive();
      }
    }
  }

  private static ProduceRequest produce(TopicPartition tp, int bytes) {
    return ProduceRequest.builder(
            SampleRequests.produceData(
                tp, MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[bytes]))))
        .build((short) 9);
  }
}
