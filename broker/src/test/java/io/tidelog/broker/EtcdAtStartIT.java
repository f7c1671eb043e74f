package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker started while its etcd is down: it stays up, alive and not ready, says why and retries;
 * when etcd returns it joins and serves what its log held before.
 */
class EtcdAtStartIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  @Test
  void aBrokerWaitsForEtcdWithoutLosingItsLog() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(0, dir.resolve("broker-0"), etcd.endpoint(), Map.of())) {
      // Given a broker whose log holds 10 acknowledged records, stopped,
      broker.start();
      String bootstrap = broker.address();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic("kept", 1, (short) 1))).all().get();
      }
      try (KafkaProducer<String, String> producer =
          new KafkaProducer<>(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
              new StringSerializer(),
              new StringSerializer())) {
        for (int i = 0; i < 10; i++) {
          producer.send(new ProducerRecord<>("kept", "r" + i)).get();
        }
      }
      broker.stop();

      // when it starts again while etcd is down,
      etcd.stop();
      broker.launch();
      // it stays up, alive and not ready, and says what it waits for, past several retries;
      await().atMost(Duration.ofSeconds(60)).until(() -> broker.log().contains("retrying in 2 s"));
      assertThat(broker.isAlive()).isTrue();
      assertThat(status(broker, "/healthz")).isEqualTo(200);
      assertThat(status(broker, "/readyz")).isEqualTo(503);
      assertThat(broker.log())
          .contains("Cannot read cluster metadata from etcd at [" + etcd.endpoint() + "]");

      // and once etcd is back, it joins and serves the records it had.
      etcd.start();
      broker.awaitListening();
      await().atMost(Duration.ofSeconds(30)).until(() -> status(broker, "/readyz") == 200);
      assertThat(consumeAll(bootstrap, 10)).containsExactly(expected(10));
    }
  }

  private static int status(BrokerProcess broker, String path) {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.httpPort + path))
                  .timeout(Duration.ofSeconds(5))
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private static List<String> consumeAll(String bootstrap, int count) {
    TopicPartition tp = new TopicPartition("kept", 0);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (values.size() < count && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
      }
    }
    return values;
  }

  private static String[] expected(int count) {
    String[] values = new String[count];
    for (int i = 0; i < count; i++) {
      values[i] = "r" + i;
    }
    return values;
  }
}
