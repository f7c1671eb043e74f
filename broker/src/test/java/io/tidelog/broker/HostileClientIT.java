package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker of 256 MiB (a process of its own, exiting on OutOfMemoryError) under a hostile client
 * that repeats issue 17's probes for 20 s: CreateTopics of Integer.MAX_VALUE partitions, a Fetch
 * naming one partition 320,000 times, a Produce of 60,000 entries for one partition, and promises
 * of 100 MiB requests. Meanwhile another client's idempotent acks=all producer and its consumer get
 * no error, every record is read back in order, and the broker stays up.
 */
class HostileClientIT {
  private static final Duration HOSTILE_FOR = Duration.ofSeconds(20);
  @TempDir Path dir;

  @Test
  void theBrokerServesOthersThroughTheProbesOfIssue17() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(0, dir.resolve("broker"), etcd.endpoint(), Map.of()).start()) {
      String bootstrap = broker.address();
      broker.createTopics("victim", "target");
      ExecutorService hostile = Executors.newSingleThreadExecutor();
      AtomicInteger rounds = new AtomicInteger();
      List<String> sent = new ArrayList<>();
      List<String> read = new ArrayList<>();
      try {
        Future<?> attacks = hostile.submit(() -> attack(broker.port, rounds));
        try (KafkaProducer<String, String> producer = producer(bootstrap)) {
          long end = System.nanoTime() + HOSTILE_FOR.toNanos();
          for (int i = 0; System.nanoTime() < end && i < 100_000; i++) {
            String value = "v" + i;
            RecordMetadata acked = producer.send(new ProducerRecord<>("victim", value)).get();
            assertThat(acked.offset()).isEqualTo(i);
            sent.add(value);
            Thread.sleep(10);
          }
        }
        attacks.get(120, TimeUnit.SECONDS); // its own assertions held in every round
      } finally {
        hostile.shutdownNow();
      }
      assertThat(rounds.get()).as("hostile rounds").isPositive();
      assertThat(sent).hasSizeGreaterThan(100);

      try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
        TopicPartition tp = new TopicPartition("victim", 0);
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () -> {
                  consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
                  return read.size() >= sent.size();
                });
      }
      assertThat(read).isEqualTo(sent);
      assertThat(broker.isAlive()).isTrue();
    }
  }

  /** Issue 17's probes, in rounds for {@link #HOSTILE_FOR}; each answer as Kafka would give it. */
  private static Void attack(int port, AtomicInteger rounds) throws Exception {
    TopicPartition target = new TopicPartition("target", 0);
    CreatableTopicCollection huge = new CreatableTopicCollection();
    huge.add(
        new CreatableTopic()
            .setName("huge")
            .setNumPartitions(Integer.MAX_VALUE)
            .setReplicationFactor((short) 1));
    CreateTopicsRequest create =
        new CreateTopicsRequest.Builder(
                new CreateTopicsRequestData().setTopics(huge).setTimeoutMs(10_000))
            .build((short) 7);
    FetchRequest fetch = SampleRequests.repeatedFetch(target, 320_000, Integer.MAX_VALUE);
    List<MemoryRecords> batches = new ArrayList<>();
    for (int i = 0; i < 60_000; i++) {
      batches.add(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[8])));
    }
    ProduceRequest produce = SampleRequests.repeatedProduce((short) 1, target, batches);

    long end = System.nanoTime() + HOSTILE_FOR.toNanos();
    List<Socket> promises = new ArrayList<>();
    try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
      while (System.nanoTime() < end && rounds.get() < 1_000) {
        CreateTopicsResponse created = (CreateTopicsResponse) client.send(create);
        assertThat(created.data().topics().iterator().next().errorCode())
            .isEqualTo(Errors.POLICY_VIOLATION.code());

        FetchResponse fetched = (FetchResponse) client.send(fetch);
        assertThat(fetched.data().responses()).hasSize(1);
        assertThat(fetched.data().responses().get(0).partitions()).hasSize(1);

        ProduceResponse produced = (ProduceResponse) client.send(produce);
        assertThat(produced.data().responses().iterator().next().partitionResponses()).hasSize(1);
        assertThat(SampleRequests.firstError(produced)).isEqualTo(Errors.NONE);

        if (promises.size() < 20) {
          Socket socket = new Socket("127.0.0.1", port);
          DataOutputStream out = new DataOutputStream(socket.getOutputStream());
          out.writeInt(100 * 1024 * 1024);
          out.write(0);
          out.flush();
          promises.add(socket);
        }
        rounds.incrementAndGet();
      }
    } finally {
      for (Socket socket : promises) {
        socket.close();
      }
    }
    return null;
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static KafkaConsumer<String, String> consumer(String bootstrap) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
  }
}
