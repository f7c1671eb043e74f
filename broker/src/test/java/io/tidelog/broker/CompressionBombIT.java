package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A compression bomb, a zstd batch of a few kilobytes holding one record of 512 MiB of zeros, sent
 * to a broker whose heap is 256 MiB: it is refused with MESSAGE_TOO_LARGE once it has inflated past
 * {@code tidelog.max.uncompressed.message.bytes} (128 MiB by default), and the broker, its memory
 * intact, goes on taking writes.
 */
class CompressionBombIT {
  private static final TopicPartition TP = new TopicPartition("bombed", 0);
  private static final int BOMB_BYTES = 512 << 20;

  @TempDir Path dir;

  @Test
  void aCompressionBombIsRefusedAndTheBrokerServesOn() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(0, dir.resolve("broker-0"), etcd.endpoint(), Map.of())) {
      broker.start();
      try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
        client.send(SampleRequests.createTopics(TP.topic(), 1).build());
        PartitionProduceResponse first = produce(client, plain("before"));
        for (int attempt = 0; attempt < 100 && first.errorCode() != 0; attempt++) {
          Thread.sleep(100); // the new topic's leader is not known yet
          first = produce(client, plain("before"));
        }
        assertThat(Errors.forCode(first.errorCode())).isEqualTo(Errors.NONE);

        MemoryRecords bomb = bomb();
        PartitionProduceResponse refused = produce(client, bomb);
        PartitionProduceResponse after = produce(client, plain("after"));

        assertThat(bomb.sizeInBytes()).isLessThan(1 << 20);
        assertThat(Errors.forCode(refused.errorCode())).isEqualTo(Errors.MESSAGE_TOO_LARGE);
        assertThat(refused.errorMessage())
            .isEqualTo(
                "The record batch decompresses to more than"
                    + " tidelog.max.uncompressed.message.bytes (134217728 bytes)");
        assertThat(Errors.forCode(after.errorCode())).isEqualTo(Errors.NONE);
        assertThat(after.baseOffset()).isEqualTo(1);
      }
      assertThat(broker.isAlive()).isTrue();
      assertThat(broker.log()).doesNotContain("OutOfMemoryError");
    }
  }

  private static MemoryRecords plain(String value) {
    return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes()));
  }

  private static MemoryRecords bomb() {
    MemoryRecordsBuilder builder =
        MemoryRecords.builder(
            ByteBuffer.allocate(64 << 10),
            Compression.zstd().build(),
            TimestampType.CREATE_TIME,
            0L);
    builder.append(System.currentTimeMillis(), null, ByteBuffer.allocate(BOMB_BYTES));
    return builder.build();
  }

  private static PartitionProduceResponse produce(RawKafkaClient client, MemoryRecords records)
      throws Exception {
    ProduceResponse response =
        (ProduceResponse)
            client.send(
                ProduceRequest.builder(SampleRequests.produceData(TP, records)).build((short) 12));
    return response.data().responses().iterator().next().partitionResponses().get(0);
  }
}
