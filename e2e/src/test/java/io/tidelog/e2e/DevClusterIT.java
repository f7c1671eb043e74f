package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/tidelog dev}: up, status, a SIGTERM restart (down, up) and a SIGKILL restart, after
 * each of which a consumer reads back every record the producer had acknowledged.
 */
class DevClusterIT {
  private static final String TOPIC = "restarts";
  private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

  @TempDir Path dir;

  @Test
  void acknowledgedRecordsSurviveCleanAndKilledRestarts() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      assertThat(bootstrap).isEqualTo("127.0.0.1:" + cluster.port);
      assertThat(cluster.status().output()).contains("running").contains(bootstrap);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
      }
      produce(bootstrap, 0, 1000);

      // SIGTERM: a clean shutdown leaves Kafka's clean-shutdown marker, then everything is back
      assertThat(cluster.down().output()).contains("stopped");
      assertThat(cluster.dataDir().resolve(".kafka_cleanshutdown")).exists();
      assertThat(cluster.status().exitCode()).isEqualTo(3);
      assertThat(cluster.up()).isEqualTo(bootstrap);
      assertThat(consume(bootstrap, 1000)).isEqualTo(expected(0, 1000));

      // SIGKILL: no marker, recovery on start, and every acknowledged record is back
      produce(bootstrap, 1000, 2000);
      cluster.kill();
      assertThat(cluster.dataDir().resolve(".kafka_cleanshutdown")).doesNotExist();
      assertThat(cluster.up()).isEqualTo(bootstrap);
      assertThat(consume(bootstrap, 2000)).isEqualTo(expected(0, 2000));
      assertThat(cluster.run("logs").output()).contains("unclean");
    }
  }

  private static void produce(String bootstrap, int from, int to) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = from; i < to; i++) {
        acks.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "v" + i)));
      }
      for (int i = 0; i < acks.size(); i++) {
        assertThat(acks.get(i).get().offset()).isEqualTo(from + i);
      }
    }
  }

  private static List<String> consume(String bootstrap, int expected) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(TP));
      consumer.seekToBeginning(List.of(TP));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (values.size() < expected && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          values.add(record.value());
        }
      }
    }
    return values;
  }

  private static List<String> expected(int from, int to) {
    List<String> values = new ArrayList<>();
    for (int i = from; i < to; i++) {
      values.add("v" + i);
    }
    return values;
  }

  static String utf8(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
