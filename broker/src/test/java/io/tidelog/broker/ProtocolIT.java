package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every advertised version of every API, built and parsed by kafka-clients, and the bad input of
 * the issue: oversize, garbage and truncated frames, unknown APIs and versions, and invalid
 * batches. After each, the broker must still serve.
 */
class ProtocolIT {
  private static final int REQUEST_MAX_BYTES = 2 << 20;
  @TempDir static Path logDir;
  static TestBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker =
        TestBroker.start(
            logDir,
            Map.of(
                "socket.request.max.bytes", String.valueOf(REQUEST_MAX_BYTES),
                "offsets.topic.num.partitions", "1",
                "group.initial.rebalance.delay.ms", "0"));
  }

  @AfterAll
  static void stop() throws Exception {
    broker.close();
  }

  private static AbstractResponse send(AbstractRequest request) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      return client.send(request);
    }
  }

  private static ApiVersionsResponse apiVersions() throws Exception {
    return (ApiVersionsResponse) send(new ApiVersionsRequest.Builder().build((short) 3));
  }

  private static void assertBrokerServes() throws Exception {
    assertThat(apiVersions().data().errorCode()).isEqualTo(Errors.NONE.code());
  }

  @Test
  void everyAdvertisedVersionOfEveryApiIsServed() throws Exception {
    // Given the advertised ranges; when each version of each API is sent; then it is answered
    // without error (Produce v0-2 are advertised for librdkafka's sake and refused)
    send(SampleRequests.createTopics("versions", 2));
    awaitGroupCoordinator("versions-group");
    awaitTransactionCoordinator("versions-txn");
    int served = 0;
    for (ApiVersion range : apiVersions().data().apiKeys()) {
      ApiKeys api = ApiKeys.forId(range.apiKey());
      for (short v = range.minVersion(); v <= range.maxVersion(); v++) {
        if (api == ApiKeys.PRODUCE && v < 3) {
          continue;
        }
        AbstractResponse response = send(SampleRequests.of(api, v, "versions"));
        assertThat(response.errorCounts().keySet())
            .as("%s v%d", api, v)
            .isSubsetOf(expectedErrors(api));
        served++;
      }
    }
    assertThat(served).isGreaterThan(40);
  }

  /** FindCoordinator creates __consumer_offsets; a moment later its leader has loaded it. */
  private static void awaitGroupCoordinator(String group) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                send(SampleRequests.of(ApiKeys.FIND_COORDINATOR, (short) 4, "versions"))
                        .errorCounts()
                        .keySet()
                        .equals(java.util.Set.of(Errors.NONE))
                    && send(SampleRequests.of(ApiKeys.OFFSET_FETCH, (short) 8, "versions"))
                        .errorCounts()
                        .keySet()
                        .equals(java.util.Set.of(Errors.NONE)));
  }

  /** Likewise for __transaction_state: ListTransactions answers once every partition loaded. */
  private static void awaitTransactionCoordinator(String transactionalId) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                send(new FindCoordinatorRequest.Builder(
                                new FindCoordinatorRequestData()
                                    .setKeyType(
                                        FindCoordinatorRequest.CoordinatorType.TRANSACTION.id())
                                    .setCoordinatorKeys(List.of(transactionalId)))
                            .build((short) 4))
                        .errorCounts()
                        .keySet()
                        .equals(java.util.Set.of(Errors.NONE))
                    && send(SampleRequests.of(ApiKeys.LIST_TRANSACTIONS, (short) 0, "versions"))
                        .errorCounts()
                        .keySet()
                        .equals(java.util.Set.of(Errors.NONE)));
  }

  private static java.util.Set<Errors> expectedErrors(ApiKeys api) {
    // CreateTopics/DeleteTopics repeat per version: their second call hits the first's result.
    return switch (api) {
      case CREATE_TOPICS -> java.util.Set.of(Errors.NONE, Errors.TOPIC_ALREADY_EXISTS);
      // one broker: its partitions' only replica leads already
      case ELECT_LEADERS -> java.util.Set.of(Errors.NONE, Errors.ELECTION_NOT_NEEDED);
      // the sample cancels a move, and none is in progress
      case ALTER_PARTITION_REASSIGNMENTS ->
          java.util.Set.of(Errors.NONE, Errors.NO_REASSIGNMENT_IN_PROGRESS);
      // the sample names a log directory the broker does not have, as Kafka answers it
      case ALTER_REPLICA_LOG_DIRS -> java.util.Set.of(Errors.LOG_DIR_NOT_FOUND);
      case SASL_HANDSHAKE,
          SASL_AUTHENTICATE,
          CREATE_ACLS,
          DESCRIBE_ACLS,
          DELETE_ACLS,
          DESCRIBE_USER_SCRAM_CREDENTIALS,
          ALTER_USER_SCRAM_CREDENTIALS,
          DESCRIBE_CLIENT_QUOTAS,
          ALTER_CLIENT_QUOTAS ->
          java.util.Set.copyOf(SampleSecurityRequests.expectedErrors(api));
      case ADD_PARTITIONS_TO_TXN,
          ADD_OFFSETS_TO_TXN,
          END_TXN,
          TXN_OFFSET_COMMIT,
          DESCRIBE_TRANSACTIONS,
          LIST_TRANSACTIONS ->
          java.util.Set.copyOf(SampleTransactionRequests.expectedErrors(api));
      default -> java.util.Set.copyOf(SampleGroupRequests.expectedErrors(api));
    };
  }

  private static AbstractResponse send(CreateTopicsRequest.Builder builder) throws Exception {
    return send(builder.build());
  }

  /** Produces {@code records}, damaged by {@code damage} after kafka-clients built the request. */
  private static Errors produceError(
      MemoryRecords records, java.util.function.Consumer<ByteBuffer> damage) throws Exception {
    TopicPartition tp = new TopicPartition("bad-batches", 0);
    ProduceRequest request =
        ProduceRequest.builder(SampleRequests.produceData(tp, records)).build((short) 9);
    damage.accept(records.buffer());
    ProduceResponse response = (ProduceResponse) send(request);
    return Errors.forCode(
        response.data().responses().iterator().next().partitionResponses().get(0).errorCode());
  }

  private static MemoryRecords batch(byte[]... values) {
    return MemoryRecords.withRecords(
        Compression.NONE,
        java.util.Arrays.stream(values).map(SimpleRecord::new).toArray(SimpleRecord[]::new));
  }

  private static void rewriteCrc(ByteBuffer batch) {
    long crc = org.apache.kafka.common.utils.Crc32C.compute(batch, 21, batch.limit() - 21);
    batch.putInt(17, (int) crc);
  }

  private static long logEndOffset(String topic) throws Exception {
    FetchResponse response =
        (FetchResponse)
            send(
                FetchRequest.Builder.forConsumer(
                        (short) 12,
                        0,
                        0,
                        Map.of(
                            new TopicPartition(topic, 0),
                            new FetchRequest.PartitionData(
                                Uuid.ZERO_UUID, 0, 0, 1 << 20, Optional.empty())))
                    .build((short) 12));
    return response.data().responses().get(0).partitions().get(0).highWatermark();
  }

  @Test
  void invalidBatchesGetTheirErrorCodesAndNothingReachesTheLog() throws Exception {
    send(SampleRequests.createTopics("bad-batches", 1));
    assertThat(produceError(batch("ok".getBytes()), b -> {})).isEqualTo(Errors.NONE);

    // Kafka's v2 batch layout: magic at byte 16, CRC at 17 (over bytes 21..), record count at 57
    assertThat(produceError(batch("x".getBytes()), b -> b.put(b.limit() - 1, (byte) 0x55)))
        .isEqualTo(Errors.CORRUPT_MESSAGE);
    assertThat(
            produceError(
                batch("x".getBytes(), "y".getBytes()),
                b -> {
                  b.putInt(57, 5);
                  rewriteCrc(b);
                }))
        .isEqualTo(Errors.INVALID_RECORD);
    assertThat(produceError(batch("x".getBytes()), b -> b.put(16, RecordBatch.MAGIC_VALUE_V1)))
        .isIn(Errors.INVALID_RECORD, Errors.CORRUPT_MESSAGE);
    assertThat(produceError(batch(new byte[1_100_000]), b -> {}))
        .isEqualTo(Errors.MESSAGE_TOO_LARGE);
    assertThat(logEndOffset("bad-batches")).isEqualTo(1);
  }

  @Test
  void anOversizeFrameClosesOnlyThatConnection() throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(ByteBuffer.allocate(4).putInt(REQUEST_MAX_BYTES + 1).array());
      assertThat(client.closedByBroker()).isTrue();
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(ByteBuffer.allocate(4).putInt(-5).array());
      assertThat(client.closedByBroker()).isTrue();
    }
    // An oversize frame followed, in the same write, by a valid request: the request is not served
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      ByteBuffer valid =
          new ApiVersionsRequest.Builder()
              .build((short) 3)
              .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "x", 1));
      byte[] both =
          ByteBuffer.allocate(8 + valid.remaining())
              .putInt(REQUEST_MAX_BYTES + 1)
              .putInt(valid.remaining())
              .put(valid)
              .array();
      client.sendBytes(both);
      assertThat(client.closedByBroker()).isTrue();
    }
    assertBrokerServes();
  }

  @Test
  void garbageTruncatedFramesAndUnknownApisCloseTheConnection() throws Exception {
    Random random = new Random(1);
    for (int i = 0; i < 20; i++) {
      byte[] garbage = new byte[8 + random.nextInt(200)];
      random.nextBytes(garbage);
      garbage[0] = 0; // a plausible API key high byte, so that parsing goes deeper
      try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
        client.sendFrame(ByteBuffer.wrap(garbage));
        assertThat(client.closedByBroker()).as("garbage %d", i).isTrue();
      }
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(new byte[] {0, 0, 0, 100, 0, 18, 0}); // 7 of 104 bytes, then the client goes
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendFrame(
          ByteBuffer.allocate(10)
              .putShort((short) 999)
              .putShort((short) 0)
              .putInt(1)
              .putShort((short) -1)
              .flip());
      assertThat(client.closedByBroker()).isTrue();
    }
    assertBrokerServes();
  }

  @Test
  void anUnknownApiVersionsVersionGetsAV0ErrorResponse() throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendFrame(
          ByteBuffer.allocate(10)
              .putShort(ApiKeys.API_VERSIONS.id)
              .putShort((short) 99)
              .putInt(7)
              .putShort((short) -1)
              .flip());
      ByteBuffer response = ByteBuffer.wrap(client.readFrame());

      assertThat(response.getInt()).isEqualTo(7); // v0 response header: the correlation id only
      ApiVersionsResponse body =
          (ApiVersionsResponse)
              AbstractResponse.parseResponse(
                  ApiKeys.API_VERSIONS,
                  new org.apache.kafka.common.protocol.ByteBufferAccessor(response),
                  (short) 0);
      assertThat(body.data().errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
      assertThat(body.data().apiKeys().find(ApiKeys.PRODUCE.id)).isNotNull();
    }
  }

  private static FetchRequest fetch(
      int maxWaitMs, int minBytes, int maxBytes, Map<TopicPartition, Long> offsets) {
    Map<TopicPartition, FetchRequest.PartitionData> partitions = new java.util.LinkedHashMap<>();
    offsets.forEach(
        (tp, offset) ->
            partitions.put(
                tp,
                new FetchRequest.PartitionData(
                    Uuid.ZERO_UUID, offset, 0, 1 << 20, Optional.empty())));
    return FetchRequest.Builder.forConsumer((short) 12, maxWaitMs, minBytes, partitions)
        .setMaxBytes(maxBytes)
        .build((short) 12);
  }

  private static void produceOne(TopicPartition tp, String value) throws Exception {
    ProduceResponse response =
        (ProduceResponse)
            send(
                ProduceRequest.builder(
                        SampleRequests.produceData(
                            tp,
                            MemoryRecords.withRecords(
                                Compression.NONE, new SimpleRecord(value.getBytes()))))
                    .build((short) 9));
    assertThat(
            response.data().responses().iterator().next().partitionResponses().get(0).errorCode())
        .isZero();
  }

  /** Fetch offsets of 0 for {@code tps}, in their order. */
  private static Map<TopicPartition, Long> fromStart(TopicPartition... tps) {
    Map<TopicPartition, Long> offsets = new java.util.LinkedHashMap<>();
    for (TopicPartition tp : tps) {
      offsets.put(tp, 0L);
    }
    return offsets;
  }

  @Test
  void fetchHonoursMaxBytesAcrossPartitionsAndAnswersEveryPartition() throws Exception {
    // Given two partitions with a 2 KiB batch each; when a fetch allows 100 bytes in all
    send(SampleRequests.createTopics("budget", 2));
    TopicPartition p0 = new TopicPartition("budget", 0);
    TopicPartition p1 = new TopicPartition("budget", 1);
    produceOne(p0, "a".repeat(2048));
    produceOne(p1, "b".repeat(2048));
    Map<TopicPartition, Long> offsets = fromStart(p0, p1);

    FetchResponse response = (FetchResponse) send(fetch(0, 1, 100, offsets));

    // Then the first partition still gets its whole first batch (KIP-74), the second none, and
    // both are answered with their high watermark
    var partitions = response.data().responses().get(0).partitions();
    assertThat(partitions).hasSize(2);
    assertThat(FetchResponse.recordsSize(partitions.get(0))).isGreaterThan(2048);
    assertThat(FetchResponse.recordsSize(partitions.get(1))).isZero();
    assertThat(partitions.get(1).highWatermark()).isEqualTo(1);
  }

  @Test
  void aPartitionGetsTheWholeBatchesThatFitWhatTheFetchBudgetLeavesIt() throws Exception {
    // Given a 2 KiB batch on one partition, and two on the next (partitions are read at once, each
    // within the whole budget, then trimmed in request order)
    send(SampleRequests.createTopics("budget-left", 2));
    TopicPartition p0 = new TopicPartition("budget-left", 0);
    TopicPartition p1 = new TopicPartition("budget-left", 1);
    produceOne(p0, "a".repeat(2048));
    produceOne(p1, "b".repeat(2048));
    produceOne(p1, "c".repeat(2048));
    Map<TopicPartition, Long> offsets = fromStart(p0, p1);
    int batch =
        FetchResponse.recordsSize(
            ((FetchResponse) send(fetch(0, 1, 1 << 20, Map.of(p0, 0L))))
                .data()
                .responses()
                .get(0)
                .partitions()
                .get(0));

    // When a fetch allows both partitions two batches and a half in all
    FetchResponse response = (FetchResponse) send(fetch(0, 1, 2 * batch + batch / 2, offsets));

    // Then the first gets its batch, the second only the one of its two that fits what is left
    var partitions = response.data().responses().get(0).partitions();
    assertThat(FetchResponse.recordsSize(partitions.get(0))).isEqualTo(batch);
    assertThat(FetchResponse.recordsSize(partitions.get(1))).isEqualTo(batch);
    assertThat(partitions.get(1).highWatermark()).isEqualTo(2);
  }

  @Test
  void aLongPollReturnsAsSoonAsDataArrives() throws Exception {
    // Given an empty partition and a fetch that waits up to 10 s for one byte
    send(SampleRequests.createTopics("long-poll", 1));
    TopicPartition tp = new TopicPartition("long-poll", 0);
    long start = System.nanoTime();
    var pending =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                return (FetchResponse) send(fetch(10_000, 1, 1 << 20, Map.of(tp, 0L)));
              } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            });

    // When a record is produced meanwhile, then the fetch returns it well before max.wait.ms
    Thread.sleep(300); // lets the fetch park first; the assertion below does not depend on it
    produceOne(tp, "late");
    FetchResponse response = pending.get(10, java.util.concurrent.TimeUnit.SECONDS);
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(FetchResponse.recordsSize(response.data().responses().get(0).partitions().get(0)))
        .isPositive();
    assertThat(elapsedMs).isLessThan(5_000);

    // and with nothing to read, it waits max.wait.ms and answers empty
    long emptyStart = System.nanoTime();
    FetchResponse empty = (FetchResponse) send(fetch(500, 1, 1 << 20, Map.of(tp, 1L)));
    assertThat(FetchResponse.recordsSize(empty.data().responses().get(0).partitions().get(0)))
        .isZero();
    assertThat((System.nanoTime() - emptyStart) / 1_000_000).isGreaterThanOrEqualTo(450);
  }

  @Test
  void aLongPollAddsUpTheBytesOfAllItsPartitionsAgainstMinBytes() throws Exception {
    // Given two empty partitions and a fetch that waits up to 30 s for 3 KiB: more than one
    // 2 KiB batch, less than two
    send(SampleRequests.createTopics("min-bytes", 2));
    TopicPartition p0 = new TopicPartition("min-bytes", 0);
    TopicPartition p1 = new TopicPartition("min-bytes", 1);
    Map<TopicPartition, Long> offsets = fromStart(p0, p1);
    var pending =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                return (FetchResponse) send(fetch(30_000, 3 * 1024, 1 << 20, offsets));
              } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            });

    // When one batch lands in each partition, a while apart
    Thread.sleep(300); // lets the fetch park first; the assertions hold either way
    produceOne(p0, "a".repeat(2048));
    Thread.sleep(300); // were the first batch enough, the fetch would answer now, without p1
    produceOne(p1, "b".repeat(2048));

    // Then the answer waited for the second: it carries both
    var partitions = pending.get(30, java.util.concurrent.TimeUnit.SECONDS).data().responses();
    assertThat(partitions.get(0).partitions())
        .allSatisfy(p -> assertThat(FetchResponse.recordsSize(p)).isGreaterThan(2048));
    assertThat(partitions.get(0).partitions()).hasSize(2);
  }

  @Test
  void pipelinedRequestsBeyondTheInFlightLimitAreAllAnsweredInOrder() throws Exception {
    // Given 150 long-poll fetches written at once (more than the 64 a connection keeps in flight),
    // each waiting 100 ms on an empty partition, then an ApiVersions
    send(SampleRequests.createTopics("pipelined", 1));
    TopicPartition tp = new TopicPartition("pipelined", 0);
    int fetches = 150;
    java.io.ByteArrayOutputStream pipeline = new java.io.ByteArrayOutputStream();
    for (int i = 1; i <= fetches + 1; i++) {
      AbstractRequest request =
          i <= fetches
              ? fetch(100, 1, 1 << 20, Map.of(tp, 0L))
              : new ApiVersionsRequest.Builder().build((short) 3);
      ByteBuffer body =
          request.serializeWithHeader(
              new RequestHeader(request.apiKey(), request.version(), "pipe", i));
      pipeline.write(ByteBuffer.allocate(4).putInt(body.remaining()).array());
      pipeline.write(body.array(), body.arrayOffset() + body.position(), body.remaining());
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(pipeline.toByteArray());

      // Then every response comes back, in request order
      for (int i = 1; i <= fetches + 1; i++) {
        assertThat(ByteBuffer.wrap(client.readFrame()).getInt()).as("correlation id").isEqualTo(i);
      }
    }
  }
}
