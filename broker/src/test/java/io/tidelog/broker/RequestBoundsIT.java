package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker's own bounds on what requests may cost, whatever they ask, and that nothing a client
 * sends makes it drop work: one storage shard here (num.io.threads=1), so every partition shares
 * one queue.
 */
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
        assertThat(SampleRequests.firstError(produced)).isEqualTo(Errors.NONE);
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

  /**
   * Far more partition tasks than the shard's queue once held (10,000, beyond which tasks were
   * refused and answered UNKNOWN_SERVER_ERROR): 4 connections each pipeline 5 ListOffsets naming
   * 50,000 distinct partitions of a 100-partition topic. Every partition of every request gets its
   * answer (NONE, or UNKNOWN_TOPIC_OR_PARTITION past the 100th), and a produce meanwhile succeeds.
   */
  @Test
  void clientWorkBeyondTheOldQueueIsServedNotRefused() throws Exception {
    String topic = "wide";
    try (RawKafkaClient client = new RawKafkaClient(broker.port, 60_000)) {
      client.send(SampleRequests.createTopics(topic, 100).build((short) 7));
    }
    int named = 50_000;
    List<ListOffsetsPartition> all = new ArrayList<>();
    for (int p = 0; p < named; p++) {
      all.add(
          new ListOffsetsPartition()
              .setPartitionIndex(p)
              .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP));
    }
    ListOffsetsRequest request =
        ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
            .setTargetTimes(List.of(new ListOffsetsTopic().setName(topic).setPartitions(all)))
            .build((short) 7);
    Map<Errors, Integer> expected =
        Map.of(Errors.NONE, 100, Errors.UNKNOWN_TOPIC_OR_PARTITION, named - 100);
    await() // every partition has its leader
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(errors(send(request))).isEqualTo(expected));

    int connections = 4;
    int pipelined = 5;
    ExecutorService pool = Executors.newFixedThreadPool(connections);
    try {
      List<Future<List<Map<Errors, Integer>>>> results = new ArrayList<>();
      for (int c = 0; c < connections; c++) {
        results.add(
            pool.submit(
                () -> {
                  try (RawKafkaClient client = new RawKafkaClient(broker.port, 120_000)) {
                    List<RequestHeader> headers = new ArrayList<>();
                    for (int i = 0; i < pipelined; i++) {
                      RequestHeader header =
                          new RequestHeader(ApiKeys.LIST_OFFSETS, (short) 7, "flood", i);
                      headers.add(header);
                      client.sendFrame(request.serializeWithHeader(header));
                    }
                    List<Map<Errors, Integer>> answers = new ArrayList<>();
                    for (RequestHeader header : headers) {
                      answers.add(
                          errors(
                              (ListOffsetsResponse)
                                  AbstractResponse.parseResponse(
                                      ByteBuffer.wrap(client.readFrame()), header)));
                    }
                    return answers;
                  }
                }));
      }
      // Meanwhile another client's produce is served
      TopicPartition victim = new TopicPartition(topic, 7);
      try (RawKafkaClient client = new RawKafkaClient(broker.port, 120_000)) {
        ProduceResponse produced =
            (ProduceResponse)
                client.send(
                    ProduceRequest.builder(
                            SampleRequests.produceData(
                                victim,
                                MemoryRecords.withRecords(
                                    Compression.NONE, new SimpleRecord("v".getBytes()))))
                        .build((short) 9));
        assertThat(SampleRequests.firstError(produced)).isEqualTo(Errors.NONE);
      }
      for (Future<List<Map<Errors, Integer>>> result : results) {
        assertThat(result.get(180, TimeUnit.SECONDS)).hasSize(pipelined).containsOnly(expected);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A Metadata request naming 1,000 unknown topics creates what the auto-creation quota allows (a
   * burst of 110 partitions at the default 10 a second) in few etcd transactions, answers the rest
   * THROTTLING_QUOTA_EXCEEDED at once, and a real producer to a new topic afterwards gets it once
   * the bucket refills: the client retries, as for any retriable error.
   */
  @Test
  void autoCreationIsBoundedByItsQuotaAndClientsRetry() throws Exception {
    List<MetadataRequestData.MetadataRequestTopic> names = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      names.add(new MetadataRequestData.MetadataRequestTopic().setName("flood-" + i));
    }
    MetadataResponse response;
    try (RawKafkaClient client = new RawKafkaClient(broker.port, 60_000)) {
      response =
          (MetadataResponse)
              client.send(
                  new MetadataRequest.Builder(
                          new MetadataRequestData()
                              .setTopics(names)
                              .setAllowAutoTopicCreation(true))
                      .build((short) 12));
    }
    Map<Errors, Integer> errors = new EnumMap<>(Errors.class);
    response
        .data()
        .topics()
        .forEach(t -> errors.merge(Errors.forCode(t.errorCode()), 1, Integer::sum));
    int throttled = errors.getOrDefault(Errors.THROTTLING_QUOTA_EXCEEDED, 0);
    assertThat(errors.keySet())
        .isSubsetOf(Errors.NONE, Errors.LEADER_NOT_AVAILABLE, Errors.THROTTLING_QUOTA_EXCEEDED);
    assertThat(1_000 - throttled).as("topics created").isBetween(100, 125);

    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      assertThat(producer.send(new ProducerRecord<>("after-flood", "v")).get().offset()).isZero();
    }
  }

  private static ListOffsetsResponse send(ListOffsetsRequest request) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port, 60_000)) {
      return (ListOffsetsResponse) client.send(request);
    }
  }

  private static Map<Errors, Integer> errors(ListOffsetsResponse response) {
    Map<Errors, Integer> counts = new EnumMap<>(Errors.class);
    response
        .data()
        .topics()
        .forEach(
            t ->
                t.partitions()
                    .forEach(p -> counts.merge(Errors.forCode(p.errorCode()), 1, Integer::sum)));
    return counts;
  }
}
