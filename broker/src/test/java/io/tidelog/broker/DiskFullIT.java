package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker whose only log directory, a small tmpfs, fills up: the produce fails with
 * KAFKA_STORAGE_ERROR, the broker stops (exit status 1, as Kafka's does when every log directory
 * has failed, so that its leaderships move), and started again once there is room it recovers a
 * valid log with every acknowledged record and takes writes again.
 */
class DiskFullIT {
  private static final String TOPIC = "full";
  @TempDir Path dir;

  @Test
  void aFullDiskFailsProduceStopsTheBrokerAndLosesNothing() throws Exception {
    try (Tmpfs disk = Tmpfs.mount(dir.resolve("disk"), 16 * 1024);
        EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(
                0,
                dir.resolve("broker-0"),
                etcd.endpoint(),
                Map.of("log.dirs", disk.path.resolve("data").toString()))) {
      // Given 20 acknowledged records,
      broker.start();
      String bootstrap = broker.address();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
      }
      List<String> acknowledged = new ArrayList<>();
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        for (int i = 0; i < 20; i++) {
          producer.send(new ProducerRecord<>(TOPIC, "r" + i)).get();
          acknowledged.add("r" + i);
        }

        // when the disk fills up, the next produce fails with KAFKA_STORAGE_ERROR
        disk.fill();
        String large = "x".repeat(64 * 1024);
        assertThatThrownBy(() -> producer.send(new ProducerRecord<>(TOPIC, large)).get())
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(KafkaStorageException.class);
      }

      // and the broker stops, saying why;
      assertThat(broker.awaitExit(60)).isEqualTo(1);
      assertThat(broker.log())
          .contains("No space left on device", "Every log directory is offline");

      // once there is room again, it starts, recovers its log with every acknowledged record,
      // and takes writes again.
      disk.free();
      broker.start();
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        producer.send(new ProducerRecord<>(TOPIC, "after")).get(30, TimeUnit.SECONDS);
      }
      List<String> values = readAll(bootstrap);
      assertThat(values.subList(0, acknowledged.size())).isEqualTo(acknowledged);
      assertThat(values.get(values.size() - 1)).isEqualTo("after");
      assertThat(values).hasSizeBetween(acknowledged.size() + 1, acknowledged.size() + 2);
    }
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ProducerConfig.RETRIES_CONFIG,
            0,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
            false,
            ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
            1 << 20),
        new StringSerializer(),
        new StringSerializer());
  }

  private static List<String> readAll(String bootstrap) {
    TopicPartition tp = new TopicPartition(TOPIC, 0);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (consumer.position(tp) < end && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
      }
    }
    return values;
  }
}
