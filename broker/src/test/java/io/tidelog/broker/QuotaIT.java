package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DeleteTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer under a {@code producer_byte_rate} quota of its client id, sending as fast as it can,
 * against Apache Kafka 4.1 and against Tidelog: over 30 s its rate is within 10% of the rate Kafka
 * lets it have, within 10% of the quota itself, and it is throttled; a producer beside it with no
 * quota is never throttled. The 30 s start once the rate covers its whole span (11 windows of 1 s,
 * as in Kafka): until then a young rate lets a burst through, in Kafka as here.
 */
class QuotaIT {
  private static final long QUOTA_BYTES_PER_SECOND = 512 * 1024;
  private static final long WARM_UP_MS = 11_000;
  private static final long MEASURE_MS = 30_000;
  @TempDir static Path kafkaDir;
  @TempDir static Path tidelogDir;
  static ApacheKafka kafka;
  static TestBroker tidelog;

  @BeforeAll
  static void start() throws Exception {
    kafka = ApacheKafka.start(kafkaDir);
    tidelog = TestBroker.start(tidelogDir, Map.of());
  }

  @AfterAll
  static void stop() throws Exception {
    try (ApacheKafka k = kafka;
        TestBroker t = tidelog) {
      // both stop
    }
  }

  /** The bytes per second the throttled producer got; asserts the unthrottled one was not. */
  private static double throttledRate(String bootstrap) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("quota", 2, (short) 1))).all().get();
      admin
          .alterClientQuotas(
              List.of(
                  new ClientQuotaAlteration(
                      new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "slow")),
                      List.of(
                          new ClientQuotaAlteration.Op(
                              "producer_byte_rate", (double) QUOTA_BYTES_PER_SECOND)))))
          .all()
          .get();
    }
    try (KafkaProducer<byte[], byte[]> slow = producer(bootstrap, "slow");
        KafkaProducer<byte[], byte[]> fast = producer(bootstrap, "fast")) {
      AtomicLong slowBytes = new AtomicLong();
      AtomicLong fastBytes = new AtomicLong();
      long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WARM_UP_MS);
      long end = start + TimeUnit.MILLISECONDS.toNanos(MEASURE_MS);
      Thread slowSender = sender(slow, slowBytes, start, end);
      Thread fastSender = sender(fast, fastBytes, start, end);
      slowSender.start();
      fastSender.start();
      slowSender.join(TimeUnit.MINUTES.toMillis(2));
      fastSender.join(TimeUnit.MINUTES.toMillis(2));
      double seconds = MEASURE_MS / 1e3;
      assertThat(metric(slow, "produce-throttle-time-max")).isPositive();
      assertThat(metric(fast, "produce-throttle-time-max")).isZero();
      assertThat(fastBytes.get() / seconds).isGreaterThan(2.0 * QUOTA_BYTES_PER_SECOND);
      return slowBytes.get() / seconds;
    }
  }

  private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String clientId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ProducerConfig.ACKS_CONFIG, "1");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, String.valueOf(4 * 1024 * 1024));
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /**
   * Sends 1,000-byte values as fast as the producer takes them until {@code untilNanos}, counting
   * the bytes acknowledged between {@code fromNanos} and then.
   */
  private static Thread sender(
      KafkaProducer<byte[], byte[]> producer,
      AtomicLong ackedBytes,
      long fromNanos,
      long untilNanos) {
    return new Thread(
        () -> {
          byte[] value = new byte[1_000];
          for (long i = 0; System.nanoTime() < untilNanos && i < 100_000_000L; i++) {
            producer.send(
                new ProducerRecord<>("quota", value),
                (metadata, e) -> {
                  long now = System.nanoTime();
                  if (e == null && now >= fromNanos && now < untilNanos) {
                    ackedBytes.addAndGet(value.length);
                  }
                });
          }
          producer.flush();
        });
  }

  private static double metric(KafkaProducer<byte[], byte[]> producer, String name) {
    for (Map.Entry<org.apache.kafka.common.MetricName, ? extends Metric> m :
        producer.metrics().entrySet()) {
      if (m.getKey().name().equals(name) && m.getKey().group().equals("producer-metrics")) {
        return ((Number) m.getValue().metricValue()).doubleValue();
      }
    }
    throw new AssertionError("no producer metric " + name);
  }

  @Test
  void aThrottledProducerGetsTheRateKafkaGivesItAndOneBesideItIsNotSlowed() throws Exception {
    double kafkaRate = throttledRate("127.0.0.1:" + kafka.port);
    double tidelogRate = throttledRate(tidelog.bootstrap());
    System.out.printf(
        "producer_byte_rate %d: Kafka let %.0f B/s through, Tidelog %.0f B/s (%.3f of Kafka's)%n",
        QUOTA_BYTES_PER_SECOND, kafkaRate, tidelogRate, tidelogRate / kafkaRate);
    assertThat(tidelogRate).isBetween(0.9 * kafkaRate, 1.1 * kafkaRate);
    assertThat(tidelogRate).isBetween(0.9 * QUOTA_BYTES_PER_SECOND, 1.1 * QUOTA_BYTES_PER_SECOND);
  }

  /** Sets a quota of a client id, and waits until the broker describes it. */
  private static void setClientQuota(Admin admin, String clientId, String key, double value)
      throws Exception {
    ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, clientId));
    admin
        .alterClientQuotas(
            List.of(
                new ClientQuotaAlteration(
                    entity, List.of(new ClientQuotaAlteration.Op(key, value)))))
        .all()
        .get();
    ClientQuotaFilter filter =
        ClientQuotaFilter.containsOnly(
            List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.CLIENT_ID, clientId)));
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> admin.describeClientQuotas(filter).entities().get().containsKey(entity));
  }

  /**
   * A client id under {@code controller_mutation_rate} 10, creating topics of 50 partitions, then,
   * in debt, creating one with validateOnly, adding partitions and deleting a topic, all without
   * the Admin's retries: every step's outcome, in order, as each broker answers it.
   */
  private static List<String> mutations(String bootstrap) throws Exception {
    Map<String, Object> config =
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            AdminClientConfig.CLIENT_ID_CONFIG,
            "mutator");
    List<String> outcomes = new ArrayList<>();
    try (Admin admin = Admin.create(config)) {
      setClientQuota(admin, "mutator", "controller_mutation_rate", 10.0);
      // 11 s of the rate, 110 partitions, may go at once; the topic that finds the bucket in debt
      // is refused, at most 6 topics in
      for (int i = 1; i <= 6; i++) {
        String outcome =
            outcome(
                admin
                    .createTopics(
                        List.of(new NewTopic("mq-" + i, 50, (short) 1)),
                        new CreateTopicsOptions().retryOnQuotaViolation(false))
                    .all());
        outcomes.add("create mq-" + i + " (50): " + outcome);
        if (!outcome.equals("NONE")) {
          break;
        }
      }
      outcomes.add(
          "create mq-v (50, validate only): "
              + outcome(
                  admin
                      .createTopics(
                          List.of(new NewTopic("mq-v", 50, (short) 1)),
                          new CreateTopicsOptions().validateOnly(true).retryOnQuotaViolation(false))
                      .all()));
      outcomes.add(
          "add 10 partitions to mq-1: "
              + outcome(
                  admin
                      .createPartitions(
                          Map.of("mq-1", NewPartitions.increaseTo(60)),
                          new CreatePartitionsOptions().retryOnQuotaViolation(false))
                      .all()));
      outcomes.add(
          "delete mq-1: "
              + outcome(
                  admin
                      .deleteTopics(
                          List.of("mq-1"), new DeleteTopicsOptions().retryOnQuotaViolation(false))
                      .all()));
    }
    return outcomes;
  }

  /**
   * NONE, or the error's name; a throttled one with its throttle time rounded to whole seconds, the
   * debt of at most 50 partitions at 10 a second.
   */
  private static String outcome(KafkaFuture<Void> result) throws InterruptedException {
    try {
      result.get();
      return "NONE";
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ThrottlingQuotaExceededException throttled) {
        assertThat(throttled.throttleTimeMs()).as("throttle time").isBetween(1, 5_500);
        return "THROTTLING_QUOTA_EXCEEDED";
      }
      return Errors.forException(e.getCause()).name();
    }
  }

  @Test
  void controllerMutationsOverTheirRateAreRefusedAsKafkaRefusesThem() throws Exception {
    List<String> kafkaOutcomes = mutations("127.0.0.1:" + kafka.port);
    List<String> tidelogOutcomes = mutations(tidelog.bootstrap());
    System.out.printf(
        "controller_mutation_rate 10:%n  Kafka   %s%n  Tidelog %s%n",
        kafkaOutcomes, tidelogOutcomes);
    assertThat(kafkaOutcomes).contains("create mq-4 (50): THROTTLING_QUOTA_EXCEEDED");
    assertThat(tidelogOutcomes).isEqualTo(kafkaOutcomes);
  }

  /**
   * Calls describeCluster as fast as one Admin can for 10 s, beside another doing the same: the
   * calls each client id completed, the one named {@code busy} under {@code request_percentage} 1
   * (10 ms of a thread a second).
   */
  private static Map<String, Long> requestRates(String bootstrap) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      setClientQuota(admin, "busy", "request_percentage", 1.0);
    }
    Map<String, AtomicLong> calls = Map.of("busy", new AtomicLong(), "free", new AtomicLong());
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<Thread> callers = new ArrayList<>();
    for (String clientId : calls.keySet()) {
      Thread caller =
          new Thread(
              () -> {
                try (Admin admin =
                    Admin.create(
                        Map.of(
                            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                            bootstrap,
                            AdminClientConfig.CLIENT_ID_CONFIG,
                            clientId))) {
                  for (int i = 0; i < 1_000_000 && System.nanoTime() < end; i++) {
                    admin.describeCluster().clusterId().get();
                    calls.get(clientId).incrementAndGet();
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      caller.start();
      callers.add(caller);
    }
    for (Thread caller : callers) {
      caller.join(TimeUnit.MINUTES.toMillis(2));
    }
    return Map.of("busy", calls.get("busy").get(), "free", calls.get("free").get());
  }

  @Test
  void aClientOverItsRequestPercentageIsThrottledAndOneBesideItIsNot() throws Exception {
    Map<String, Long> kafkaCalls = requestRates("127.0.0.1:" + kafka.port);
    Map<String, Long> tidelogCalls = requestRates(tidelog.bootstrap());
    System.out.printf(
        "request_percentage 1, describeCluster calls in 10 s: Kafka %s, Tidelog %s%n",
        kafkaCalls, tidelogCalls);
    for (Map<String, Long> calls : List.of(kafkaCalls, tidelogCalls)) {
      assertThat(calls.get("busy")).isPositive().isLessThan(calls.get("free") / 2);
    }
    assertThat(
            Scrape.of(tidelog.httpPort)
                .value("tidelog_throttled_requests_total", "quota", "request_percentage"))
        .isPositive();
  }
}
