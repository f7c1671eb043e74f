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
 * Requests read but not yet answered share one memory budget ({@code queued.max.request.bytes}, an
 * eighth of the heap by default): a broker with a 256 MiB heap that twelve connections each promise
 * a 100 MiB request (a size prefix and one byte) holds the budget, not 1.2 GB, and serves again
 * once they go. Before the budget, it ran out of heap.
 */
class RequestMemoryIT {
  private static final int PROMISED_BYTES = 100 * 1024 * 1024;
  @TempDir Path dir;

  @Test
  void promisedRequestsHoldTheBudgetNotTheHeap() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(0, dir.resolve("broker"), etcd.endpoint(), Map.of()).start()) {
      String bootstrap = broker.address();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic("served", 1, (short) 1))).all().get();
      }

      List<Socket> hostile = new ArrayList<>();
      try {
        for (int i = 0; i < 12; i++) {
          Socket socket = new Socket("127.0.0.1", broker.port);
          DataOutputStream out = new DataOutputStream(socket.getOutputStream());
          out.writeInt(PROMISED_BYTES);
          out.write(0);
          out.flush();
          hostile.add(socket);
        }
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(
                () ->
                    Scrape.of(broker.httpPort).value("tidelog_request_memory_available_bytes")
                        <= 0);
        assertThat(broker.isAlive()).isTrue();
      } finally {
        for (Socket socket : hostile) {
          socket.close();
        }
      }

      // Their memory back, the broker serves a producer and a consumer
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        producer.send(new ProducerRecord<>("served", "after")).get();
      }
      try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
        TopicPartition tp = new TopicPartition("served", 0);
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        List<String> read = new ArrayList<>();
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> {
                  consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
                  return !read.isEmpty();
                });
        assertThat(read).containsExactly("after");
      }
      assertThat(broker.isAlive()).isTrue();
    }
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static KafkaConsumer<String, String> consumer(String bootstrap) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
  }
}
