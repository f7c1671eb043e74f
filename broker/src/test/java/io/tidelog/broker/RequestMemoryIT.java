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
 * Requests read but not yet answered share one memory budget ({@code queued.max.request.bytes}: by
 * default a quarter of the heap, or socket.request.max.bytes if more; 100 MiB for this 256 MiB
 * broker), taken as their bytes arrive. A client that promises a 100 MiB request and sends one byte
 * holds one byte (twelve of them took the broker out of heap before); clients that do send their
 * bytes hold at most the budget, and the broker serves everyone else once they go.
 */
class RequestMemoryIT {
  private static final int PROMISED_BYTES = 100 * 1024 * 1024;
  @TempDir Path dir;

  @Test
  void promisesHoldNothingAndBodiesHoldAtMostTheBudget() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(0, dir.resolve("broker"), etcd.endpoint(), Map.of()).start()) {
      String bootstrap = broker.address();
      broker.createTopics("served");

      // Twelve promises of 100 MiB, one byte each: the broker serves beside them
      List<Socket> promises = new ArrayList<>();
      try {
        for (int i = 0; i < 12; i++) {
          Socket socket = new Socket("127.0.0.1", broker.port);
          DataOutputStream out = new DataOutputStream(socket.getOutputStream());
          out.writeInt(PROMISED_BYTES);
          out.write(0);
          out.flush();
          promises.add(socket);
        }
        roundTrip(bootstrap, "beside promises");
        assertThat(available(broker)).isPositive();
      } finally {
        for (Socket socket : promises) {
          socket.close();
        }
      }

      // Four clients that send 100 MiB frames: together they reach the budget, and no further
      List<Socket> senders = new ArrayList<>();
      ExecutorService writers = Executors.newFixedThreadPool(4);
      try {
        for (int i = 0; i < 4; i++) {
          Socket socket = new Socket("127.0.0.1", broker.port);
          senders.add(socket);
          writers.submit(
              () -> {
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                out.writeInt(PROMISED_BYTES);
                byte[] megabyte = new byte[1 << 20];
                for (int m = 0; m < 99; m++) { // blocks once the broker stops reading
                  out.write(megabyte);
                }
                return null;
              });
        }
        await()
            .atMost(Duration.ofSeconds(60))
            .ignoreExceptions()
            .until(() -> available(broker) < 1 << 20); // less than a chunk is left
        assertThat(broker.isAlive()).isTrue();
      } finally {
        for (Socket socket : senders) {
          socket.close();
        }
        writers.shutdownNow();
      }

      // Their memory back, the broker serves a producer and a consumer
      roundTrip(bootstrap, "after");
      assertThat(broker.isAlive()).isTrue();
    }
  }

  private static double available(BrokerProcess broker) throws Exception {
    return Scrape.of(broker.httpPort).value("tidelog_request_memory_available_bytes");
  }

  /** Produces {@code value} and reads it back, from the beginning of "served". */
  private static void roundTrip(String bootstrap, String value) throws Exception {
    try (KafkaProducer<String, String> producer = producer(bootstrap)) {
      producer.send(new ProducerRecord<>("served", value)).get();
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
                return read.contains(value);
              });
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
