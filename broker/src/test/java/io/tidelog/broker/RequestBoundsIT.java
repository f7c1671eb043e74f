package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's own bounds on what one request may cost, whatever the request asks. */
class RequestBoundsIT {
  private static final int FETCH_MAX_BYTES = 1024;
  @TempDir static Path logDir;
  static TestBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker = TestBroker.start(logDir, Map.of("fetch.max.bytes", String.valueOf(FETCH_MAX_BYTES)));
  }

  @AfterAll
  static void stop() throws Exception {
    broker.close();
  }

  @Test
  void aFetchCarriesNoMoreThanFetchMaxBytesWhateverItAsks() throws Exception {
    TopicPartition tp = new TopicPartition("capped", 0);
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.send(SampleRequests.createTopics(tp.topic(), 1).build((short) 7));
      int batchBytes = 0;
      for (int i = 0; i < 3; i++) { // three batches of about 700 bytes
        MemoryRecords batch =
            MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[640]));
        batchBytes = batch.sizeInBytes();
        ProduceResponse produced =
            (ProduceResponse)
                client.send(
                    ProduceRequest.builder(SampleRequests.produceData(tp, batch)).build((short) 9));
        assertThat(
                produced
                    .data()
                    .responses()
                    .iterator()
                    .next()
                    .partitionResponses()
                    .get(0)
                    .errorCode())
            .isEqualTo(Errors.NONE.code());
      }

      FetchResponse response =
          (FetchResponse)
              client.send(
                  FetchRequest.Builder.forConsumer(
                          (short) 12,
                          0,
                          0,
                          Map.of(
                              tp,
                              new FetchRequest.PartitionData(
                                  Uuid.ZERO_UUID, 0, 0, 64 << 20, Optional.empty())))
                      .setMaxBytes(64 << 20)
                      .build((short) 12));

      var partition = response.data().responses().get(0).partitions().get(0);
      assertThat(partition.errorCode()).isEqualTo(Errors.NONE.code());
      assertThat(partition.highWatermark()).isEqualTo(3);
      // One whole batch fits in 1024 bytes, two do not: the request's 64 MiB does not count
      assertThat(partition.records().sizeInBytes()).isEqualTo(batchBytes);
    }
  }
}
