package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutates valid requests of every served API (bit flips, random bytes, edge-value ints, truncation,
 * trailing junk) and sends them to a broker for a bounded time ({@code -Dtidelog.fuzz.seconds}, 60
 * s by default), from a seed ({@code -Dtidelog.fuzz.seed}, which a failure names, to replay it).
 * The broker must keep answering, every batch in its logs must stay valid, and its heap must not
 * grow without bound.
 *
 * <p>The admin APIs are fuzzed too: a mutated CreateTopics or CreatePartitions may legitimately ask
 * for up to the per-request limit of partitions, so the broker runs with a default {@code
 * controller_mutation_rate} quota, as a cluster open to such clients would; DeleteTopics deletes
 * topics the CreateTopics seeds made, never the one whose logs are checked.
 */
class FuzzIT {
  private static final long FUZZ_SECONDS = Long.getLong("tidelog.fuzz.seconds", 60);
  private static final int ITERATIONS_MAX = 1_000_000;
  private static final int READ_TIMEOUT_MS = 200;
  private static final long HEAP_GROWTH_BYTES_MAX = 128L << 20;

  /** Partitions a second that topic creation and growth may take, per client. */
  private static final double MUTATION_RATE = 20;

  private static final String TOPIC = "fuzz";

  @TempDir Path logDir;

  @Test
  void mutatedRequestsNeitherStopTheBrokerNorCorruptItsLogs() throws Exception {
    long seed = Long.getLong("tidelog.fuzz.seed", System.nanoTime());
    System.out.println("FuzzIT seed " + seed + " (-Dtidelog.fuzz.seed=" + seed + " replays it)");
    Random random = new Random(seed);
    try (TestBroker broker =
        TestBroker.start(
            logDir,
            Map.of(
                "auto.create.topics.enable", "false",
                "offsets.topic.num.partitions", "1",
                "group.initial.rebalance.delay.ms", "0"))) {
      try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
        client.send(SampleRequests.createTopics(TOPIC, 2).build());
      }
      try (org.apache.kafka.clients.admin.Admin admin =
          org.apache.kafka.clients.admin.Admin.create(
              Map.of("bootstrap.servers", "127.0.0.1:" + broker.port))) {
        admin
            .alterClientQuotas(
                List.of(
                    new ClientQuotaAlteration(
                        new ClientQuotaEntity(
                            java.util.Collections.singletonMap(ClientQuotaEntity.CLIENT_ID, null)),
                        List.of(
                            new ClientQuotaAlteration.Op(
                                "controller_mutation_rate", MUTATION_RATE)))))
            .all()
            .get();
      }
      List<byte[]> seeds = validRequests(broker);
      try (RawKafkaClient unmutated = new RawKafkaClient(broker.port)) {
        for (byte[] seedRequest :
            seeds) { // every one is answered, and Produce puts data in the logs
          unmutated.sendFrame(ByteBuffer.wrap(seedRequest));
          unmutated.readFrame();
        }
      }
      long heapBefore = usedHeapAfterGc();
      long deadline = System.nanoTime() + FUZZ_SECONDS * 1_000_000_000L;
      int sent = 0;
      RawKafkaClient client = new RawKafkaClient(broker.port, READ_TIMEOUT_MS);
      try {
        for (; sent < ITERATIONS_MAX && System.nanoTime() < deadline; sent++) {
          byte[] request = mutate(seeds.get(random.nextInt(seeds.size())), random);
          try {
            client.sendFrame(ByteBuffer.wrap(request));
            client.readFrame();
          } catch (IOException closedOrSilent) {
            client.close();
            client = new RawKafkaClient(broker.port, READ_TIMEOUT_MS);
          }
          if (sent % 500 == 0) {
            assertServes(broker);
          }
        }
      } finally {
        client.close();
      }
      assertServes(broker);
      assertThat(sent).isGreaterThan(100);
      assertThat(usedHeapAfterGc() - heapBefore)
          .as("heap growth after %d requests of seed %d", sent, seed)
          .isLessThan(HEAP_GROWTH_BYTES_MAX);
      try (java.util.stream.Stream<Path> dirs = java.nio.file.Files.list(logDir)) {
        System.out.println(
            "FuzzIT sent "
                + sent
                + " mutated requests; the logs hold "
                + dirs.filter(java.nio.file.Files::isDirectory).count()
                + " partitions");
      }
    }
    assertThat(assertLogsValid(logDir)).as("batches on disk").isPositive();
  }

  /** Every advertised version of every API, serialized with its header. */
  private static List<byte[]> validRequests(TestBroker broker) throws Exception {
    List<byte[]> requests = new ArrayList<>();
    ApiVersionsResponse versions;
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      versions =
          (ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder().build((short) 3));
    }
    for (ApiVersion range : versions.data().apiKeys()) {
      ApiKeys api = ApiKeys.forId(range.apiKey());
      for (short v = (short) Math.max(range.minVersion(), api == ApiKeys.PRODUCE ? 3 : 0);
          v <= range.maxVersion();
          v++) {
        AbstractRequest request = SampleRequests.of(api, v, TOPIC);
        ByteBuffer bytes = request.serializeWithHeader(new RequestHeader(api, v, "fuzz", 1));
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(copy);
        requests.add(copy);
      }
    }
    return requests;
  }

  private static byte[] mutate(byte[] valid, Random random) {
    byte[] bytes = valid.clone();
    int mutations = 1 + random.nextInt(4);
    for (int m = 0; m < mutations && bytes.length > 0; m++) {
      // Never the API key (garbage keys are ProtocolIT's). Keep the version too half of the time.
      int from = Math.min(random.nextBoolean() ? 4 : 2, bytes.length - 1);
      int at = from + random.nextInt(bytes.length - from);
      switch (random.nextInt(5)) {
        case 0 -> bytes[at] ^= (byte) (1 << random.nextInt(8));
        case 1 -> bytes[at] = (byte) random.nextInt(256);
        case 2 -> {
          if (at + 4 <= bytes.length) {
            int[] edges = {
              0, -1, 1, Integer.MAX_VALUE, Integer.MIN_VALUE, 0x7fff, 0xffff, random.nextInt()
            };
            ByteBuffer.wrap(bytes, at, 4).putInt(edges[random.nextInt(edges.length)]);
          }
        }
        case 3 -> bytes = java.util.Arrays.copyOf(bytes, at);
        default -> {
          byte[] longer = java.util.Arrays.copyOf(bytes, bytes.length + 1 + random.nextInt(64));
          for (int i = bytes.length; i < longer.length; i++) {
            longer[i] = (byte) random.nextInt(256);
          }
          bytes = longer;
        }
      }
    }
    return bytes;
  }

  private static void assertServes(TestBroker broker) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      ApiVersionsResponse response =
          (ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder().build((short) 3));
      assertThat(response.data().errorCode()).isEqualTo(Errors.NONE.code());
    }
  }

  /**
   * Scans every segment file on disk (records below a moved log start offset included): every batch
   * must pass its CRC and offsets must grow.
   */
  private static int assertLogsValid(Path logDir) throws IOException {
    int checked = 0;
    List<Path> segments;
    try (var files = java.nio.file.Files.walk(logDir)) {
      segments = files.filter(f -> f.toString().endsWith(".log")).sorted().toList();
    }
    for (Path segment : segments) {
      long previous = -1;
      try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
        for (RecordBatch batch : records.batches()) {
          batch.ensureValid();
          assertThat(batch.baseOffset()).as("%s", segment).isGreaterThan(previous);
          previous = batch.lastOffset();
          checked++;
        }
      }
    }
    return checked;
  }

  private static long usedHeapAfterGc() {
    Runtime runtime = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return runtime.totalMemory() - runtime.freeMemory();
  }
}
